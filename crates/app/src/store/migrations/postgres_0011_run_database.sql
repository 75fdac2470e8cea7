-- The database each run read and wrote (its identity: the URL without a password, a SQLite path made absolute),
-- so that runs can be listed by database; NULL for runs written before.
ALTER TABLE runs ADD COLUMN database TEXT;
