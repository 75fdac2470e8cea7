-- Where each audited call came from (cli, api, v1, mcp, eval).
ALTER TABLE audit_trail ADD COLUMN surface TEXT;
-- What a waiting run ran under (database, model, config fingerprint, surface), so that resuming needs no flags.
ALTER TABLE pending_runs ADD COLUMN context TEXT;
-- A call's records (its intent, then how it ended) are found together.
CREATE INDEX audit_trail_by_call ON audit_trail (run_id, call_id, seq);
