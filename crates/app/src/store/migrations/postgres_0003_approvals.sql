-- Runs that wait for a person's approval, saved so that another process can decide and resume them, and the
-- calls they wait for. `state` is the whole run as JSON (suspended sub-runs inside it).
CREATE TABLE pending_runs (
    run_id     TEXT NOT NULL PRIMARY KEY,
    agent      TEXT NOT NULL,
    principal  TEXT NOT NULL,
    state      TEXT NOT NULL,
    saved_at   TIMESTAMPTZ NOT NULL,
    resumed_at TIMESTAMPTZ
);

CREATE TABLE approvals (
    id              TEXT NOT NULL PRIMARY KEY,
    run_id          TEXT NOT NULL,
    call_id         TEXT NOT NULL,
    tool            TEXT NOT NULL,
    arguments       TEXT NOT NULL,
    reason          TEXT NOT NULL,
    preview         TEXT,
    requested_at    TIMESTAMPTZ NOT NULL,
    decision        TEXT,
    decision_reason TEXT,
    edited          TEXT,
    decided_by      TEXT,
    decided_at      TIMESTAMPTZ
);
CREATE INDEX approvals_by_run ON approvals (run_id);
