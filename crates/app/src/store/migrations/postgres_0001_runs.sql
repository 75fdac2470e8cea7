-- Runs, their events and their tool calls. JSON is text: records are kept byte for byte, and tool
-- arguments exactly as the model sent them, valid JSON or not.
CREATE TABLE runs (
    id            TEXT NOT NULL PRIMARY KEY,
    parent_id     TEXT,
    root_id       TEXT NOT NULL,
    agent         TEXT NOT NULL,
    input         TEXT NOT NULL,
    started_at    TIMESTAMPTZ NOT NULL,
    finished_at   TIMESTAMPTZ,
    last_event_at TIMESTAMPTZ NOT NULL,
    outcome       TEXT,
    outcome_json  TEXT,
    steps         BIGINT NOT NULL DEFAULT 0,
    input_tokens  BIGINT NOT NULL DEFAULT 0,
    output_tokens BIGINT NOT NULL DEFAULT 0,
    cost_usd      DOUBLE PRECISION,
    model         TEXT,
    principal     TEXT
);
CREATE INDEX runs_by_root ON runs (root_id);
CREATE INDEX runs_newest ON runs (started_at DESC, id DESC) WHERE parent_id IS NULL;

CREATE TABLE events (
    run_id  TEXT NOT NULL,
    seq     BIGINT NOT NULL,
    root_id TEXT NOT NULL,
    at      TIMESTAMPTZ NOT NULL,
    kind    TEXT NOT NULL,
    record  TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE INDEX events_by_root ON events (root_id, seq);

CREATE TABLE tool_calls (
    run_id      TEXT NOT NULL,
    call_id     TEXT NOT NULL,
    seq         BIGINT NOT NULL,
    tool        TEXT NOT NULL,
    arguments   TEXT NOT NULL,
    result      TEXT,
    is_error    BOOLEAN,
    duration_ms BIGINT,
    PRIMARY KEY (run_id, call_id)
);
