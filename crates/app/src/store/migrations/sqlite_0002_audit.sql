-- The audit trail: one record per settled tool call, in one chain for the whole store. Each record's hash is
-- SHA-256 of the previous record's hash followed by this record's fields (seq included), so a record edited,
-- deleted or inserted breaks the chain from there on. Runs keep the role they ran with.
ALTER TABLE runs ADD COLUMN role TEXT;

CREATE TABLE audit_trail (
    seq             INTEGER NOT NULL PRIMARY KEY,
    at              TEXT NOT NULL,
    principal       TEXT NOT NULL,
    role            TEXT,
    run_id          TEXT NOT NULL,
    agent_path      TEXT NOT NULL,
    call_id         TEXT NOT NULL,
    tool            TEXT NOT NULL,
    arguments       TEXT NOT NULL,
    sql_fingerprint TEXT,
    decision        TEXT NOT NULL,
    decision_reason TEXT,
    approval        TEXT,
    approval_reason TEXT,
    approved_by     TEXT,
    status          TEXT NOT NULL,
    prev_hash       TEXT NOT NULL,
    hash            TEXT NOT NULL
);
CREATE INDEX audit_trail_by_run ON audit_trail (run_id);
