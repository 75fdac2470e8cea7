-- Verified examples: a question with the SQL that answered it, saved for one database (its identity, as
-- runs.database) by a person, from a run, the web UI, the API or an import; the analyst's context shows the
-- ones most like each question. `fingerprint` (a hash of the question and the SQL) keeps one copy of each.
CREATE TABLE verified_examples (
    id          TEXT NOT NULL PRIMARY KEY,
    database    TEXT NOT NULL,
    question    TEXT NOT NULL,
    sql         TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    saved_by    TEXT NOT NULL,
    saved_at    TEXT NOT NULL,
    source      TEXT NOT NULL,
    run_id      TEXT
);
CREATE UNIQUE INDEX verified_examples_once ON verified_examples (database, fingerprint);
