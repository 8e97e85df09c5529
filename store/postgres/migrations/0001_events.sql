-- The ledger on PostgreSQL: one append-only table of events, one row per conversation for the list.
-- A conversation's seq is assigned by the one instance holding its write lease (writer, lease_token,
-- writer_until); last_seq is the highest seq committed, updated in the same transaction as the events.

CREATE TABLE conversations (
    id           text PRIMARY KEY,
    title        text NOT NULL DEFAULT '',
    created      timestamptz NOT NULL DEFAULT now(),
    updated      timestamptz NOT NULL DEFAULT now(),
    last_seq     bigint NOT NULL DEFAULT 0,
    deleted      boolean NOT NULL DEFAULT false,
    deleted_at   timestamptz,
    writer       text,
    lease_token  text,
    writer_until timestamptz
);

CREATE TABLE events (
    conversation_id text NOT NULL REFERENCES conversations (id),
    seq             bigint NOT NULL CHECK (seq > 0),
    kind            text NOT NULL,
    attempt_id      text,
    message_id      text,
    request_id      text,
    ts              text NOT NULL,
    recorded_at     timestamptz NOT NULL DEFAULT now(),
    writer          text,
    payload         jsonb NOT NULL,
    PRIMARY KEY (conversation_id, seq)
);

-- the audit: every event of an attempt, and every event of a kind over time
CREATE INDEX events_by_attempt ON events (attempt_id, seq) WHERE attempt_id IS NOT NULL;
CREATE INDEX events_by_kind ON events (kind, recorded_at);
-- the conversation list, newest first
CREATE INDEX conversations_by_updated ON conversations (updated DESC) WHERE NOT deleted;
