-- Share links (/s/<token>), shared by every instance on this database: looked up by the sha256 of the link's token
-- (the token itself is never stored); share_id names the link in its conversation's ledger (share_created).

CREATE TABLE share_links (
    token_sha256    text PRIMARY KEY CHECK (token_sha256 ~ '^[0-9a-f]{64}$'),
    share_id        text NOT NULL UNIQUE,
    conversation_id text NOT NULL,
    owner           text,
    created_ts      text NOT NULL
);
