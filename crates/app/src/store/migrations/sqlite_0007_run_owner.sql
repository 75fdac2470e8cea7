-- The process that writes each run (`<host>:<pid>:<start>`, see `store/owner.rs`), so that whoever opens the
-- store next can mark the runs of a process that died as `died`; NULL for runs written before.
ALTER TABLE runs ADD COLUMN owner TEXT;
-- The runs without an outcome, which are all that opening a store looks at.
CREATE INDEX runs_unfinished ON runs (owner) WHERE outcome IS NULL;
