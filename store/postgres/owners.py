"""Who runs each streaming attempt, across app instances on one PostgreSQL, and requests sent to that owner.

Guarantees:
- ``claim`` records this instance as the owner of an attempt until ``now() + lease`` (one short statement, done
  before the attempt's ``started`` event can be durable, so no other instance ever sees a live attempt whose
  owner row is missing unless it ended or its owner failed to claim). A background thread renews every attempt
  this instance owns every ``lease / 3`` s: an owner that stops renewing (it died, or stalled past its lease)
  shows in ``expired`` once ``lease`` has passed since its last renewal, never earlier.
- ``release`` forgets attempts (call it once their end is durable in the events table).
- ``request`` delivers a JSON request to the instance that owns an attempt (``NOTIFY ledger_requests``); the
  thread hands every request addressed to this instance to ``on_request``, in arrival order, on the thread.
  Requests are not stored: the requester watches the ledger and sends again when nothing happened.
- A database failure on the thread is reported once (no credentials) and retried with backoff up to 2 s.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import psycopg
from psycopg_pool import ConnectionPool

from ledger.errors import StoreError
from store.health import ProblemLog
from store.postgres.schema import connect, describe_db_error

CHANNEL = "ledger_requests"
Request = dict[str, Any]


class Owner(NamedTuple):
    attempt_id: str
    conversation_id: str
    owner: str
    expired: bool


class AttemptOwners:
    """Attempt leases of one instance (named ``instance``, as its store's write leases are)."""

    def __init__(
        self, url: str, instance: str, *, lease: float, on_request: Callable[[Request], None], problems: ProblemLog
    ) -> None:
        self.url, self.instance, self.lease = url, instance, lease
        self.on_request, self.problems = on_request, problems
        self._stop = threading.Event()
        self._pool: ConnectionPool[psycopg.Connection[tuple[object, ...]]] | None = None
        self._thread = threading.Thread(target=self._run, name="ledger-pg-owners", daemon=True)

    def start(self) -> None:
        self._pool = ConnectionPool(
            self.url, min_size=1, max_size=3, open=True, kwargs={"autocommit": True}, name="ledger-owners"
        )
        self._thread.start()

    def claim(self, attempt_id: str, conversation_id: str) -> bool:
        """Own a new attempt; False if it already has an owner (it was started elsewhere: never taken over)."""
        return bool(
            self._fetch(
                "INSERT INTO attempt_owners (attempt_id, conversation_id, owner, owner_until) "
                "VALUES (%s, %s, %s, now() + make_interval(secs => %s)) ON CONFLICT (attempt_id) DO NOTHING "
                "RETURNING attempt_id",
                (attempt_id, conversation_id, self.instance, self.lease),
            )
        )

    def release(self, attempt_ids: list[str]) -> None:
        if attempt_ids:
            self._execute("DELETE FROM attempt_owners WHERE attempt_id = ANY(%s)", (attempt_ids,))

    def owners(self, attempt_ids: list[str] | None = None) -> list[Owner]:
        """The owner rows of these attempts (``None``: every expired row)."""
        where, params = ("attempt_id = ANY(%s)", (attempt_ids,)) if attempt_ids is not None else ("true", ())
        rows = self._fetch(
            "SELECT attempt_id, conversation_id, owner, owner_until < now() FROM attempt_owners "
            f"WHERE {where} AND (%s OR owner_until < now())",
            (*params, attempt_ids is not None),
        )
        return [Owner(str(a), str(c), str(o), bool(e)) for a, c, o, e in rows]

    def request(self, owner: str, request: Request) -> None:
        payload = json.dumps({**request, "to": owner, "from": self.instance})
        self._execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload))

    def close(self) -> None:
        self._stop.set()
        try:
            self._execute("SELECT pg_notify(%s, '{}')", (CHANNEL,))  # wakes the thread
            self._execute("DELETE FROM attempt_owners WHERE owner = %s", (self.instance,))
        except (psycopg.Error, StoreError):
            pass  # the rows expire; the survivors finalize what was left
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)
        if self._pool is not None:
            self._pool.close()

    # --- the thread: renew, listen -------------------------------------------------------------------------------

    def _run(self) -> None:
        backoff = 0.1
        while not self._stop.is_set():
            try:
                with connect(self.url) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    backoff, renewed = 0.1, 0.0
                    while not self._stop.is_set():
                        if time.monotonic() - renewed > self.lease / 3:
                            conn.execute(
                                "UPDATE attempt_owners SET owner_until = now() + make_interval(secs => %s) "
                                "WHERE owner = %s",
                                (self.lease, self.instance),
                            )
                            renewed = time.monotonic()
                        for note in conn.notifies(timeout=min(0.5, self.lease / 6), stop_after=1):
                            self._deliver(note.payload)
            except (psycopg.Error, StoreError) as exc:
                self.problems.report("owners", f"Attempt ownership was interrupted ({describe_db_error(exc)[1]}).")
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 2.0)

    def _deliver(self, payload: str) -> None:
        try:
            request = json.loads(payload)
        except ValueError:
            return
        if isinstance(request, dict) and request.get("to") == self.instance:
            self.on_request(request)

    def _execute(self, sql: str, params: tuple[object, ...]) -> None:
        self._fetch(sql, params, rows=False)

    def _fetch(self, sql: str, params: tuple[object, ...], *, rows: bool = True) -> list[tuple[object, ...]]:
        if self._pool is None:
            raise StoreError("attempt ownership is not started")
        try:
            with self._pool.connection() as conn:
                cursor = conn.execute(sql.encode(), params)
                return cursor.fetchall() if rows else []
        except psycopg.Error as exc:
            raise StoreError(f"attempt ownership: {describe_db_error(exc)[1]}") from None
