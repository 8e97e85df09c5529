-- File bytes by content (attachments of user messages, binary parts of tool results), shared by every instance on
-- this database. A row's sha256 is the lowercase hex sha256 of its data: putting the same bytes twice is one row.

CREATE TABLE blobs (
    sha256     text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    media_type text NOT NULL,
    size       bigint NOT NULL,
    data       bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
