-- Who added and who last changed (enabled, disabled) each remote tool server, and when: what a conversation's
-- ledger records about a server when it first runs a tool there (tool_server_used). Empty for rows of before.
-- remote_servers_stamp: one row whose n grows in the transaction of every change to remote_servers, so another
-- instance finds out whether its copy of the servers is stale with one read of one row (store.tokens.postgres).

ALTER TABLE remote_servers ADD COLUMN added_by text NOT NULL DEFAULT '';
ALTER TABLE remote_servers ADD COLUMN changed_by text NOT NULL DEFAULT '';
ALTER TABLE remote_servers ADD COLUMN changed_ts text NOT NULL DEFAULT '';

CREATE TABLE remote_servers_stamp (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    n   bigint NOT NULL
);
INSERT INTO remote_servers_stamp (one, n) VALUES (true, 0);
