-- Server-wide approval grants ("always allow this tool on this server"), shared by every instance on this database.
-- key is "server/tool"; grant_hash the sha256 of the tool's name, description and input schema when it was granted.

CREATE TABLE approval_grants (
    key        text PRIMARY KEY,
    grant_hash text NOT NULL CHECK (grant_hash ~ '^[0-9a-f]{64}$'),
    granted_ts text NOT NULL
);
