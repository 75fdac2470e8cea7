-- The calls of a change set that were applied (a JSON list of call ids): the others were discarded.
ALTER TABLE change_sets ADD COLUMN applied TEXT;
