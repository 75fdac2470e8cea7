-- The tool whose outside data a waiting run had read, so that its resumption keeps asking before writes.
ALTER TABLE pending_runs ADD COLUMN tainted_by TEXT;
