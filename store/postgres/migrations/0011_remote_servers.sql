-- Remote tool servers people add at run time (a name and a streamable-HTTP URL), and their OAuth tokens.
-- owner is the person whose server it is ('' for a team server); tools what it listed last (JSON text, not secret).
-- oauth_tokens.sealed is ciphertext only (Fernet, key from LEDGERCHAT_TOKEN_KEY): key is '<person>|<server>'.

CREATE TABLE remote_servers (
    owner    text NOT NULL,
    name     text NOT NULL,
    url      text NOT NULL CHECK (url ~ '^https?://'),
    enabled  boolean NOT NULL DEFAULT true,
    tools    text NOT NULL DEFAULT '[]',
    added_ts text NOT NULL,
    PRIMARY KEY (owner, name)
);

CREATE TABLE oauth_tokens (
    key    text PRIMARY KEY,
    server text NOT NULL,
    sealed bytea NOT NULL
);
