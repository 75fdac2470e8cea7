-- Change sets: the writes a run staged, saved to be applied or discarded later, once.
CREATE TABLE change_sets (
    id         TEXT NOT NULL PRIMARY KEY,
    run_id     TEXT NOT NULL,
    agent      TEXT NOT NULL,
    principal  TEXT NOT NULL,
    calls      TEXT NOT NULL,
    context    TEXT,
    saved_at   TEXT NOT NULL,
    status     TEXT NOT NULL,
    decided_by TEXT,
    decided_at TEXT,
    result     TEXT
);
CREATE INDEX change_sets_by_status ON change_sets (status, saved_at);
