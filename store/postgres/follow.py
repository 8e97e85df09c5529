"""Following the other instances on one database: listen for their commits, fetch what this instance lacks.

Guarantees:
- ``listen`` runs until ``stop`` is set, on its own connection: every commit's notification on ``CHANNEL``
  (payload ``"<conversation id> <last seq>"``) that is ahead of what ``local`` holds leads to a fetch; all the
  notifications that arrived together are served by one query (``fetch_behind``).
- A lost notification only delays: after every (re)connection, and every ``CATCH_UP_EVERY`` seconds, every
  conversation's ``last_seq`` is compared with what ``local`` holds.
- ``Followers`` hands events to every callback added, in order; a failing callback is logged, the others still run.
- A lost connection is reported once (a readable reason without credentials) and retried with backoff up to 2 s.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Protocol

import psycopg

from ledger.errors import StoreError
from ledger.events import AnyEvent
from store.health import ProblemLog
from store.postgres.rows import SELECT
from store.postgres.schema import connect, describe_db_error

CHANNEL = "ledger_events"
CATCH_UP_EVERY = 5.0
Conn = psycopg.Connection[tuple[object, ...]]
Rows = list[tuple[object, ...]]
Follower = Callable[[list[AnyEvent]], None]


class Followers:
    def __init__(self, log: logging.Logger) -> None:
        self._log, self._callbacks = log, list[Follower]()

    def add(self, callback: Follower) -> Callable[[], None]:
        self._callbacks.append(callback)
        return lambda: self._callbacks.remove(callback) if callback in self._callbacks else None

    def deliver(self, events: list[AnyEvent]) -> None:
        for callback in list(self._callbacks):
            try:
                callback(events)
            except Exception:  # noqa: BLE001 - a broken follower must not stop following
                self._log.exception("follower failed")


class Local(Protocol):
    """What this instance holds: the last seq of a conversation, and a way to take in fetched rows."""

    def last_seq(self, cid: str) -> int: ...

    def absorb(self, known: dict[str, int], rows: Rows) -> None: ...


def listen(url: str, local: Local, stop: threading.Event, problems: ProblemLog) -> None:
    backoff = 0.1
    while not stop.is_set():
        try:
            with connect(url) as conn:
                conn.execute(f"LISTEN {CHANNEL}")
                backoff = 0.1
                catch_up_all(conn, local)
                checked = time.monotonic()
                while not stop.is_set():
                    notes = [*conn.notifies(timeout=0.5, stop_after=1), *conn.notifies(timeout=0.01)]
                    behind = set()
                    for note in notes:
                        cid, _, seq = note.payload.rpartition(" ")
                        if seq.isdigit() and int(seq) > local.last_seq(cid):
                            behind.add(cid)
                    catch_up(conn, local, sorted(behind))
                    if time.monotonic() - checked > CATCH_UP_EVERY:
                        catch_up_all(conn, local)
                        checked = time.monotonic()
        except (psycopg.Error, StoreError) as exc:
            problems.report("listen", f"Following other instances was interrupted ({describe_db_error(exc)[1]}).")
            stop.wait(backoff)
            backoff = min(backoff * 2, 2.0)


def catch_up_all(conn: Conn, local: Local) -> None:
    rows = conn.execute("SELECT id, last_seq FROM conversations WHERE last_seq > 0").fetchall()
    catch_up(conn, local, [str(cid) for cid, last in rows if int(str(last)) > local.last_seq(str(cid))])


def catch_up(conn: Conn, local: Local, cids: list[str]) -> None:
    if cids:
        known = {cid: local.last_seq(cid) for cid in cids}
        local.absorb(known, fetch_behind(conn, known))


def fetch_behind(conn: Conn, known: dict[str, int]) -> Rows:
    """In one query, every event whose seq is beyond ``known[conversation]``, in (conversation, seq) order."""
    return conn.execute(
        f"{SELECT} e JOIN unnest(%s::text[], %s::bigint[]) AS k(cid, known) "
        "ON e.conversation_id = k.cid AND e.seq > k.known ORDER BY e.conversation_id, e.seq",
        (list(known), list(known.values())),
    ).fetchall()
