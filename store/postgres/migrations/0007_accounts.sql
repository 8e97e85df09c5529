-- Team mode (--accounts local): people and their sessions, shared by every instance on this database.
-- A password is kept only as its argon2id hash; a session only as the sha256 of its cookie.

CREATE TABLE accounts (
    name          text PRIMARY KEY,
    password_hash text NOT NULL,
    admin         boolean NOT NULL DEFAULT false,
    disabled      boolean NOT NULL DEFAULT false,
    created_ts    text NOT NULL,
    display       text NOT NULL DEFAULT ''   -- an OpenID Connect account's name claim
);

CREATE TABLE sessions (
    key        text PRIMARY KEY CHECK (key ~ '^[0-9a-f]{64}$'),
    name       text NOT NULL REFERENCES accounts (name),
    created_ts text NOT NULL,
    seen_ts    text NOT NULL,
    ended      boolean NOT NULL DEFAULT false
);

CREATE INDEX sessions_by_name ON sessions (name) WHERE NOT ended;
