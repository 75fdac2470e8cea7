-- The knowledge taught about each business database (the `knowledge:` section's shape, as YAML), kept in the
-- store so that every server using it shares one; merged with the config's own at load.
CREATE TABLE knowledge (
    database   TEXT NOT NULL PRIMARY KEY,
    document   TEXT NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    updated_by TEXT NOT NULL
);
