-- Fencing epochs issued by the database (issue 27). Every claim or takeover of an attempt gets a new epoch
-- (nextval of ledger_epochs); every event of a held attempt carries it (events.epoch), and the statement-level
-- trigger below refuses, in the writing transaction, every row whose non-NULL epoch is not its attempt's current
-- owner epoch (also when the owner row is gone: the attempt ended or was never claimed). A row with a NULL epoch
-- is not checked (rows written before this migration, TinyDB-born copies). A `persisted` row committed with the
-- current epoch deletes its attempt's owner row in the same transaction.

CREATE SEQUENCE ledger_epochs AS bigint;

ALTER TABLE attempt_owners
    ADD COLUMN epoch bigint NOT NULL DEFAULT nextval('ledger_epochs'),
    ADD COLUMN lease_seconds real NOT NULL DEFAULT 10;

ALTER TABLE events ADD COLUMN epoch bigint;

CREATE INDEX events_attempt_ends ON events (attempt_id, kind) WHERE kind IN ('started', 'persisted');

CREATE FUNCTION events_fenced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE refused text;
BEGIN
  -- FOR SHARE: a takeover of the same owner row that has not committed yet is waited for, then seen
  SELECT coalesce(n.attempt_id, '?') || ' ' || n.epoch INTO refused
    FROM (SELECT DISTINCT attempt_id, epoch FROM new_rows WHERE epoch IS NOT NULL) n
   WHERE n.attempt_id IS NULL OR NOT EXISTS (
         SELECT 1 FROM attempt_owners o WHERE o.attempt_id = n.attempt_id AND o.epoch = n.epoch FOR SHARE)
   LIMIT 1;
  IF refused IS NOT NULL THEN
    RAISE EXCEPTION 'a write with an old epoch was refused' USING ERRCODE = 'LCF01', DETAIL = refused;
  END IF;
  DELETE FROM attempt_owners o USING new_rows n
   WHERE n.kind = 'persisted' AND o.attempt_id = n.attempt_id AND o.epoch = n.epoch;
  RETURN NULL;
END $$;

CREATE TRIGGER events_fenced AFTER INSERT ON events
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION events_fenced();
