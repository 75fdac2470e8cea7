-- Runs, their events and their tool calls. Times are UTC text in one fixed-width form, so text order is time
-- order; JSON is text (tool arguments are kept exactly as the model sent them, valid JSON or not).
CREATE TABLE runs (
    id            TEXT NOT NULL PRIMARY KEY,
    parent_id     TEXT,
    root_id       TEXT NOT NULL,
    agent         TEXT NOT NULL,
    input         TEXT NOT NULL,
    started_at    TEXT NOT NULL,
    finished_at   TEXT,
    last_event_at TEXT NOT NULL,
    outcome       TEXT,
    outcome_json  TEXT,
    steps         INTEGER NOT NULL DEFAULT 0,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd      REAL,
    model         TEXT,
    principal     TEXT
);
CREATE INDEX runs_by_root ON runs (root_id);
CREATE INDEX runs_newest ON runs (started_at DESC, id DESC) WHERE parent_id IS NULL;

CREATE TABLE events (
    run_id  TEXT NOT NULL,
    seq     INTEGER NOT NULL,
    root_id TEXT NOT NULL,
    at      TEXT NOT NULL,
    kind    TEXT NOT NULL,
    record  TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE INDEX events_by_root ON events (root_id, seq);

CREATE TABLE tool_calls (
    run_id      TEXT NOT NULL,
    call_id     TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    tool        TEXT NOT NULL,
    arguments   TEXT NOT NULL,
    result      TEXT,
    is_error    BOOLEAN,
    duration_ms INTEGER,
    PRIMARY KEY (run_id, call_id)
);
