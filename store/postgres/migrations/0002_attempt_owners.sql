-- Attempt ownership across app instances: the instance running a streaming attempt renews owner_until every
-- few seconds; once owner_until has passed, another instance finalizes the attempt as interrupted (recovered).
-- A row is removed once the attempt's end is durable in events.

CREATE TABLE attempt_owners (
    attempt_id      text PRIMARY KEY,
    conversation_id text NOT NULL,
    owner           text NOT NULL,
    owner_until     timestamptz NOT NULL
);

CREATE INDEX attempt_owners_by_owner ON attempt_owners (owner);
CREATE INDEX attempt_owners_by_until ON attempt_owners (owner_until);
