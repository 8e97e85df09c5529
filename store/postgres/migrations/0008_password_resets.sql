-- Team mode's one-time links to set a new password (main.py users reset, the accounts page): at most one per
-- account (a new link replaces the old one), kept only as the sha256 of its token, removed when it is used.

CREATE TABLE password_resets (
    name       text PRIMARY KEY REFERENCES accounts (name),
    key        text NOT NULL UNIQUE CHECK (key ~ '^[0-9a-f]{64}$'),
    expires_ts text NOT NULL
);
