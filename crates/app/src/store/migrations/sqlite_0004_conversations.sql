-- Conversations of the server: who owns each, its agent and settings, and whether a turn is in flight.
-- A turn in flight holds a lease (`lease_owner` until `lease_until`) that its server renews; a turn whose lease
-- ran out belonged to a server that stopped, and is marked failed by whichever server sees it first.
CREATE TABLE conversations (
    id          TEXT NOT NULL PRIMARY KEY,
    owner       TEXT NOT NULL,
    title       TEXT NOT NULL,
    agent       TEXT NOT NULL,
    settings    TEXT NOT NULL,
    status      TEXT NOT NULL,
    run_id      TEXT,
    lease_owner TEXT,
    lease_until TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX conversations_by_owner ON conversations (owner, updated_at);
CREATE INDEX conversations_by_run ON conversations (run_id);

CREATE TABLE conversation_messages (
    conversation_id TEXT NOT NULL,
    seq             BIGINT NOT NULL,
    role            TEXT NOT NULL,
    content         TEXT NOT NULL,
    run_id          TEXT,
    events          TEXT,
    at              TEXT NOT NULL,
    PRIMARY KEY (conversation_id, seq)
);
