"""Who runs each streaming attempt, across app instances on one PostgreSQL, with fencing epochs issued by the
database, and requests sent to that owner.

Guarantees:
- ``claim`` records this instance as the owner of an attempt until ``now() + lease`` and returns the attempt's
  fencing epoch (``nextval('ledger_epochs')``, so > 0 and growing); claiming again an attempt this instance owns
  returns the same epoch. It raises ``ClaimRefused`` (readable) when another instance owns the attempt or the
  database cannot be reached: then nothing of the attempt may be written.
- ``take_over`` gives the attempt a new epoch, owned here, only while its row still has ``old_epoch`` and its
  lease expired by the DATABASE's clock, counting a whole lease after the server's start
  (``pg_postmaster_start_time()``): owners get one lease to reconnect after a restart. ``expired`` lists exactly
  such rows (never one whose lease has not passed by the database's clock), except those held here.
- The owners thread renews, every ``lease / 3`` s and at once after a reconnect, only the rows held here
  (claimed or taken over, not released, with their epoch); a held row that is gone or has another epoch is
  dropped from ``held`` and reported to ``on_lost(attempt_id)`` on the thread, unless the attempt's
  ``persisted`` row was committed with that epoch (the trigger of migration 0003 removed the row: it ended).
- ``release`` forgets attempts and deletes their rows (retried once on a fresh connection); ``janitor`` (also run
  on the thread every lease) deletes rows expired for a lease more whose attempt ended (``persisted``) or never
  started; ``close`` deletes this instance's rows.
- ``request`` delivers a JSON request to the instance that owns an attempt (``NOTIFY ledger_requests``), or to
  every other instance listening (``owner=EVERYONE``); the thread hands every request addressed to this instance,
  and every one sent to ``EVERYONE`` by another instance, to ``on_request``, in arrival order, on the thread.
  Payloads are never logged or stored (a NOTIFY is not kept once delivered).
- A database failure on the thread is reported once (no credentials) and retried with backoff up to 2 s.
- ``take_over`` first ends the database sessions of the expired owner (``pg_terminate_backend`` on the sessions
  its pools named after it): an owner frozen inside a batch's transaction holds row locks that would block the
  takeover for as long as it stays frozen. Where the role may not end them, that is reported and the takeover
  waits for the locks as before.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import psycopg

from ledger.errors import StoreError
from store.health import ProblemLog
from store.postgres.pool import Conn, Pool, make_pool, once_more
from store.postgres.schema import connect, describe_db_error

CHANNEL = "ledger_requests"
EVERYONE = "*"  # ``request``'s address of every other instance
Request = dict[str, Any]
_GRACE = "pg_postmaster_start_time() + make_interval(secs => lease_seconds) < now()"
_CLAIM = """
INSERT INTO attempt_owners AS o (attempt_id, conversation_id, owner, owner_until, lease_seconds, epoch)
VALUES (%(a)s, %(c)s, %(me)s, now() + make_interval(secs => %(lease)s), %(lease)s, nextval('ledger_epochs'))
ON CONFLICT (attempt_id) DO UPDATE SET owner_until = excluded.owner_until WHERE o.owner = excluded.owner
RETURNING epoch
"""
_END_SESSIONS = f"""
SELECT count(pg_terminate_backend(a.pid)) FROM attempt_owners o
  JOIN pg_stat_activity a ON a.application_name = left(o.owner, 63) AND a.pid <> pg_backend_pid()
 WHERE o.attempt_id = %(a)s AND o.epoch = %(old)s AND o.owner <> %(me)s AND o.owner_until < now() AND {_GRACE}
"""
_TAKE_OVER = f"""
UPDATE attempt_owners SET owner = %(me)s, epoch = nextval('ledger_epochs'),
       owner_until = now() + make_interval(secs => %(lease)s), lease_seconds = %(lease)s
 WHERE attempt_id = %(a)s AND epoch = %(old)s AND owner_until < now() AND {_GRACE}
RETURNING epoch
"""
_RENEW = """
UPDATE attempt_owners SET owner_until = now() + make_interval(secs => lease_seconds)
 WHERE owner = %s AND (attempt_id, epoch) IN (SELECT * FROM unnest(%s::text[], %s::bigint[]))
RETURNING attempt_id
"""
_ENDED = "SELECT attempt_id, epoch FROM events WHERE kind = 'persisted' AND attempt_id = ANY(%s)"
_JANITOR = """
DELETE FROM attempt_owners o WHERE o.owner_until < now() - make_interval(secs => o.lease_seconds)
   AND (NOT EXISTS (SELECT 1 FROM events e WHERE e.attempt_id = o.attempt_id AND e.kind = 'started')
        OR EXISTS (SELECT 1 FROM events e WHERE e.attempt_id = o.attempt_id AND e.kind = 'persisted'))
RETURNING attempt_id
"""


class ClaimRefused(StoreError):
    """An attempt could not be claimed (another instance owns it, or the database cannot be reached)."""


class Owner(NamedTuple):
    attempt_id: str
    conversation_id: str
    owner: str
    expired: bool
    epoch: int = 0


class AttemptOwners:
    """Attempt leases of one instance (named ``instance``, as its store's write leases are)."""

    def __init__(
        self, url: str, instance: str, *, lease: float, on_request: Callable[[Request], None], problems: ProblemLog,
        on_lost: Callable[[str], None] | None = None,
    ) -> None:  # fmt: skip
        self.url, self.instance, self.lease = url, instance, lease
        self.on_request, self.problems, self.on_lost = on_request, problems, on_lost
        self._stop = threading.Event()
        self._pool: Pool | None = None
        self._held: dict[str, int] = {}
        self._held_lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="ledger-pg-owners", daemon=True)

    def start(self) -> None:
        self._pool = make_pool(self.url, "ledger-owners", max_size=3, instance=self.instance)
        self._thread.start()

    @property
    def held(self) -> dict[str, int]:
        """The attempts this instance holds, with their epochs (a copy)."""
        with self._held_lock:
            return dict(self._held)

    def claim(self, attempt_id: str, conversation_id: str) -> int:
        """Own a new attempt; its epoch. Raises ``ClaimRefused`` (another owner, or no database)."""
        params = {"a": attempt_id, "c": conversation_id, "me": self.instance, "lease": self.lease}
        try:
            rows = self._fetch(_CLAIM, params)
        except StoreError as exc:
            raise ClaimRefused(f"the answer could not be claimed: {exc}") from None
        if not rows:
            raise ClaimRefused(f"answer {attempt_id} is already run by another instance")
        epoch = int(str(rows[0][0]))
        with self._held_lock:
            self._held[attempt_id] = epoch
        return epoch

    def take_over(self, attempt_id: str, old_epoch: int) -> int | None:
        """The attempt's new epoch, owned here, if its owner's lease expired by the database's clock; else None.
        The expired owner's sessions are ended first (``store.postgres.pool``): a transaction it froze in would
        block the takeover for as long as it stays frozen."""
        params = {"a": attempt_id, "old": old_epoch, "me": self.instance, "lease": self.lease}
        try:
            self._fetch(_END_SESSIONS, params)
        except StoreError as exc:  # not allowed (another role), or no database: the takeover may still work
            self.problems.report("end-sessions", f"The sessions of a stopped instance could not be ended: {exc}.")
        rows = self._fetch(_TAKE_OVER, params)
        if not rows:
            return None
        epoch = int(str(rows[0][0]))
        with self._held_lock:
            self._held[attempt_id] = epoch
        return epoch

    def expired(self) -> list[Owner]:
        """Rows whose lease passed by the database's clock (and a lease after its start), not held here."""
        rows = self._fetch(
            f"SELECT attempt_id, conversation_id, owner, epoch FROM attempt_owners WHERE owner_until < now() AND "
            f"{_GRACE} ORDER BY owner_until",
            {},
        )
        held = self.held
        return [Owner(str(a), str(c), str(o), True, int(str(e))) for a, c, o, e in rows if str(a) not in held]

    def forget(self, attempt_id: str) -> None:
        """Stop renewing an attempt whose end is durable (its row went with its ``persisted``)."""
        with self._held_lock:
            self._held.pop(attempt_id, None)

    def release(self, attempt_ids: list[str]) -> None:
        if attempt_ids:
            for attempt_id in attempt_ids:
                self.forget(attempt_id)
            self._fetch("DELETE FROM attempt_owners WHERE attempt_id = ANY(%(ids)s)", {"ids": attempt_ids}, rows=False)

    def janitor(self) -> list[str]:
        """Delete rows expired for a lease more whose attempt ended or never started; their attempt ids."""
        return [str(row[0]) for row in self._fetch(_JANITOR, {})]

    def owners(self, attempt_ids: list[str] | None = None) -> list[Owner]:
        """The owner rows of these attempts (``None``: every expired row)."""
        where = "attempt_id = ANY(%(ids)s)" if attempt_ids is not None else "owner_until < now()"
        rows = self._fetch(
            f"SELECT attempt_id, conversation_id, owner, owner_until < now(), epoch FROM attempt_owners WHERE {where}",
            {"ids": attempt_ids},
        )
        return [Owner(str(a), str(c), str(o), bool(x), int(str(e))) for a, c, o, x, e in rows]

    def request(self, owner: str, request: Request) -> None:
        payload = json.dumps({**request, "to": owner, "from": self.instance})
        self._fetch("SELECT pg_notify(%(ch)s, %(p)s)", {"ch": CHANNEL, "p": payload}, rows=False)

    def close(self) -> None:
        self._stop.set()
        try:
            self._fetch("SELECT pg_notify(%(ch)s, '{}')", {"ch": CHANNEL}, rows=False)  # wakes the thread
            self._fetch("DELETE FROM attempt_owners WHERE owner = %(me)s", {"me": self.instance}, rows=False)
        except (psycopg.Error, StoreError):
            pass  # the rows expire; the survivors finalize what was left
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)
        if self._pool is not None:
            self._pool.close()

    # --- the thread: renew, clean, listen ------------------------------------------------------------------------

    def _run(self) -> None:
        backoff = 0.1
        while not self._stop.is_set():
            try:
                with connect(self.url) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    backoff, renewed, cleaned = 0.1, 0.0, time.monotonic()
                    while not self._stop.is_set():
                        if time.monotonic() - renewed > self.lease / 3:
                            self._renew(conn)
                            renewed = time.monotonic()
                        if time.monotonic() - cleaned > self.lease:
                            conn.execute(_JANITOR)
                            cleaned = time.monotonic()
                        for note in conn.notifies(timeout=min(0.5, self.lease / 6), stop_after=1):
                            self._deliver(note.payload)
            except (psycopg.Error, StoreError) as exc:
                self.problems.report("owners", f"Attempt ownership was interrupted ({describe_db_error(exc)[1]}).")
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 2.0)

    def _renew(self, conn: Conn) -> None:
        """Renew the held rows; a held row gone or with another epoch is lost (unless its attempt ended)."""
        held = self.held
        if not held:
            return
        ids = list(held)
        renewed = {str(r[0]) for r in conn.execute(_RENEW, (self.instance, ids, [held[a] for a in ids]))}
        missing = [a for a in ids if a not in renewed]
        if not missing:
            return
        ended = {(str(a), int(str(e))) for a, e in conn.execute(_ENDED, (missing,)) if e is not None}
        for attempt_id in missing:
            with self._held_lock:
                if self._held.get(attempt_id) != held[attempt_id]:
                    continue  # released or claimed again meanwhile
                del self._held[attempt_id]
            if (attempt_id, held[attempt_id]) not in ended and self.on_lost is not None:
                try:
                    self.on_lost(attempt_id)
                except Exception:  # noqa: BLE001 - a broken callback must not stop the renewals
                    self.problems.report("owners-lost", f"Telling the owner of {attempt_id} it lost it failed.")

    def _deliver(self, payload: str) -> None:
        try:
            request = json.loads(payload)
        except ValueError:
            return
        if not isinstance(request, dict):
            return
        to = request.get("to")
        if to == self.instance or to == EVERYONE and request.get("from") != self.instance:
            self.on_request(request)

    def _fetch(self, sql: str, params: dict[str, object], *, rows: bool = True) -> list[tuple[object, ...]]:
        """One idempotent statement, retried once on a fresh connection."""
        if self._pool is None:
            raise StoreError("attempt ownership is not started")

        def work(conn: Conn) -> list[tuple[object, ...]]:
            cursor = conn.execute(sql.encode(), params)
            return cursor.fetchall() if rows else []

        try:
            return once_more(self._pool, work)
        except psycopg.Error as exc:
            raise StoreError(f"attempt ownership: {describe_db_error(exc)[1]}") from None
