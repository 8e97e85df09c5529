"""The event store on PostgreSQL: the same protocol (``store.api``) as the TinyDB store, shared by several app
instances; the same writer thread (``store.writer``) and in-memory side (``store.memory``, eager: every live
conversation is held).

Design: ``append`` returns the event with its seq at once, on the event loop, while several instances write one
database. So each conversation has a *write lease* (``store.postgres.leases``): an instance's first append to it takes
the lease in one short statement (reading the last committed seq and fetching what this instance lacks); then seqs
are assigned in memory, as the TinyDB store does, and written in batches. The lease is given up once the
conversation was quiet for ``release_after`` with nothing pending; meanwhile another instance's append raises
``ConversationBusyError``. Every batch checks the lease's token: an instance that stalled past its lease and was
overtaken writes nothing for that conversation (reported), so seqs never collide.

Guarantees:
- ``append`` assigns the next seq of the conversation and returns at once; the event is readable through
  ``events()`` immediately and durable within ``flush_interval`` (250 ms), or at once for ``is_urgent`` events;
  each batch is one transaction (rows copied in, the conversation's ``last_seq`` moved, a notification sent).
- Seqs of a conversation are 1, 2, 3... without gaps or duplicates across every instance (primary key
  ``(conversation_id, seq)`` plus the lease fencing); events of one instance keep their append order.
- Events other instances commit reach this one (``LISTEN ledger_events``, payload ``"<id> <last seq>"``; the
  reader fetches what it misses, and checks every conversation every 5 s, so a lost notification only delays:
  ``store.postgres.follow``) and are handed to ``follow`` callbacks on the listener thread, in seq order.
- A deleted conversation refuses every later write, on every instance (its row is a tombstone; its events are
  removed except the ``deleted`` event itself). Saving fails loudly, as in the TinyDB store (``health()``: the
  writer's rules, ``store.writer``).
- The database URL's password never reaches a log line, an error or ``where`` (``store.postgres.schema.redact_dsn``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence

import psycopg
from psycopg_pool import ConnectionPool

from ledger.errors import ConversationDeletedError, StoreError
from ledger.events import AnyEvent, Created, Deleted, Renamed
from store.health import ProblemLog
from store.memory import Memory
from store.postgres import leases as pg_leases
from store.postgres.follow import CHANNEL, listen
from store.postgres.rows import SELECT, column_text, copy_rows, from_row
from store.postgres.schema import connect, describe_db_error, has_schema, migrate, redact_dsn
from store.writer import Batch, Batches, StoreStats, Writer, Written

log = logging.getLogger("store.postgres.store")
Follower = Callable[[list[AnyEvent]], None]


class PgStore(Memory, Batches):
    """Persistent, append-only events in PostgreSQL. Open with ``PgStore.open(url)``."""

    def __init__(
        self, url: str, *, flush_interval: float = 0.25, read_only: bool = False, lease_seconds: float = 10.0,
        release_after: float = 0.25,
    ) -> None:  # fmt: skip
        self._log = ProblemLog(log)
        lock = threading.Condition()
        super().__init__(lock, Writer(lock, self, self._log, flush_interval=flush_interval, name="ledger-batch-writer"))
        self.flush_interval = flush_interval
        self.stats = StoreStats()
        self._url = url
        self.where = redact_dsn(url)
        self.read_only = read_only
        self.lease_seconds, self.release_after = lease_seconds, min(release_after, lease_seconds / 3)
        self.instance = pg_leases.instance_name()
        self._leases: dict[str, str] = {}  # conversation id -> token of the lease this instance holds
        self._last_append: dict[str, float] = {}
        self._followers: list[Follower] = []
        self._stop = threading.Event()
        self._pool: ConnectionPool[psycopg.Connection[tuple[object, ...]]] | None = None
        self._listener = threading.Thread(
            target=lambda: listen(url, self, self._stop, self._log), name="ledger-pg-listener", daemon=True
        )

    @classmethod
    def open(cls, url: str, *, flush_interval: float = 0.25, read_only: bool = False, **options: float) -> PgStore:
        """Apply migrations (unless ``read_only``), load every live conversation, start writing and listening.
        Raises ``DatabaseUnavailableError`` when the server cannot be reached."""
        store = cls(url, flush_interval=flush_interval, read_only=read_only, **options)
        if not read_only:
            migrate(url)
        with connect(url) as conn:
            if has_schema(conn):
                store._load(conn)
        if not read_only:
            store._pool = ConnectionPool(
                url, min_size=1, max_size=4, open=True, kwargs={"autocommit": True}, name="ledger"
            )
            store.writer.start()
            store._listener.start()
        return store

    def _load(self, conn: psycopg.Connection[tuple[object, ...]]) -> None:
        deleted = {str(r[0]) for r in conn.execute("SELECT id FROM conversations WHERE deleted ORDER BY id")}
        self.restore({}, deleted)
        for cid, seq, ts, kind, payload in conn.execute(f"{SELECT} ORDER BY conversation_id, seq"):
            if cid in deleted:
                continue
            self._add_row(str(cid), seq, ts, kind, payload)

    def _add_row(self, cid: str, seq: object, ts: object, kind: object, payload: object) -> AnyEvent | None:
        try:
            event = from_row(cid, int(str(seq)), str(ts), str(kind), payload)  # type: ignore[arg-type]
        except (StoreError, ValueError, TypeError, KeyError) as exc:
            self._log.report(f"row:{cid}:{seq}", f"Conversation {cid}: event {seq} could not be read ({exc}).")
            return None
        self.keep(event)
        return event

    # --- writing ---------------------------------------------------------------------------------------------

    def append(self, event: AnyEvent) -> AnyEvent:
        """Give the event its seq (taking the conversation's write lease first if needed) and queue it.
        Raises ``ConversationDeletedError``, or ``ConversationBusyError`` while another instance writes it."""
        cid = event.conversation_id
        with self.lock:
            self._lease_for_writing(cid)
            return self.add(event)

    def _take_lease(self, cid: str, dead: str | None = None) -> None:
        """Under ``lock``: take the lease and catch up with what other instances committed."""
        assert self._pool is not None
        token = pg_leases.new_token()
        try:
            with self._pool.connection() as conn:
                last = pg_leases.acquire(conn, cid, self.instance, token, self.lease_seconds, dead)
                known = self.last_seq(cid)
                missing = conn.execute(f"{SELECT} WHERE conversation_id = %s AND seq > %s ORDER BY seq", (cid, known))
                caught = [e for row in missing if (e := self._add_row(cid, *row[1:])) is not None]
        except ConversationDeletedError:
            self.bury(cid)
            raise
        except psycopg.Error as exc:
            raise StoreError(f"the conversation could not be opened for writing: {describe_db_error(exc)[1]}") from None
        if self.last_seq(cid) != last:
            self._log.report(f"gap:{cid}", f"Conversation {cid}: events up to {last} could not all be read.")
        self._leases[cid] = token
        if caught:
            self._deliver(caught)

    def hold(self, cid: str, dead: str | None = None) -> None:
        """Take the conversation's write lease now, as the next ``append`` would (catching up first), taking it
        over from ``dead`` (an instance whose attempt leases expired). Raises like ``append``."""
        with self.lock:
            self._lease_for_writing(cid, dead)
            self.writer.wake()  # the writer thread schedules the lease's release (``housekeep``)

    def _lease_for_writing(self, cid: str, dead: str | None = None) -> None:
        """Under ``lock``: refuse a read-only store or a deleted conversation, else hold the write lease (taken,
        and caught up, if not held yet) and note the write, which keeps the lease from being given back."""
        if self.read_only or self._pool is None:
            raise StoreError("this store was opened read-only")
        if self.is_deleted(cid):
            raise ConversationDeletedError(cid)
        if cid not in self._leases:
            self._take_lease(cid, dead)
        self._last_append[cid] = time.monotonic()

    def close(self, timeout: float = 10.0) -> int:
        """Write what is pending (for at most ``timeout`` s), give up every lease, stop listening, disconnect.
        Returns how many events could not be saved."""
        if self.read_only or self._pool is None or self._pool.closed:
            return 0
        unsaved = self.writer.stop(timeout)
        self._stop.set()
        try:
            with self._pool.connection() as conn:
                pg_leases.release(conn, list(self._leases.values()))
                conn.execute("SELECT pg_notify(%s, '')", (CHANNEL,))  # wakes the listener (every instance's: harmless)
        except psycopg.Error:
            pass  # the leases expire by themselves
        if self._listener.is_alive():
            self._listener.join(timeout=2.0)
        self._pool.close()
        return unsaved

    # --- one batch, on the writer thread (``store.writer`` decides when) ---------------------------------------

    def write(self, batch: Batch) -> Written:
        """One transaction: each conversation's fence, its rows and a notification (none for an empty batch)."""
        started = time.perf_counter()
        if batch:
            assert self._pool is not None
            with self.lock:
                tokens = {cid: self._leases.get(cid, "") for cid in batch}
            lost: list[str] = []
            try:
                with self._pool.connection() as conn, conn.transaction():
                    for cid, events in batch.items():
                        if not self._write_conversation(conn, cid, events, tokens[cid]):
                            lost.append(cid)
            except Exception as exc:  # noqa: BLE001 - the single writer must survive any write error
                return 0, batch, exc
            for cid in lost:
                self._lose(cid, batch[cid])
        saved = sum(len(events) for events in batch.values())
        self.stats.record(time.perf_counter() - started, saved)
        return saved, {}, None

    def housekeeping_in(self) -> float | None:
        return self.release_after if self._leases else None

    def housekeep(self) -> None:
        """Give up the leases of conversations quiet for ``release_after`` with nothing pending."""
        if self._pool is None:
            return
        with self.lock:
            now = time.monotonic()
            quiet = [
                c
                for c in self._leases
                if not self.writer.unwritten(c) and now - self._last_append[c] > self.release_after
            ]
            tokens = [self._leases.pop(c) for c in quiet]
        if not tokens:
            return
        try:
            with self._pool.connection() as conn:
                pg_leases.release(conn, tokens)
        except psycopg.Error:
            pass  # they expire by themselves; a new append takes a new lease either way

    def _write_conversation(
        self, conn: psycopg.Connection[tuple[object, ...]], cid: str, events: Sequence[AnyEvent], token: str
    ) -> bool:
        """Inside the batch's transaction, under a savepoint: False (nothing written) when the lease was lost."""
        titles = [e.title for e in events if isinstance(e, Created | Renamed)]
        deleted = isinstance(events[-1], Deleted)
        last = events[-1].seq
        with conn.transaction():
            title = "" if deleted else (column_text(titles[-1]) if titles else None)
            if not pg_leases.fence(conn, cid, token, last, self.lease_seconds, title=title, deleted=deleted):
                return False
            copy_rows(conn, list(events), self.instance)
            if deleted:
                conn.execute("DELETE FROM events WHERE conversation_id = %s AND seq < %s", (cid, last))
            conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, f"{cid} {last}"))
        return True

    def _lose(self, cid: str, events: list[AnyEvent]) -> None:
        """The lease was lost: forget this instance's unwritten tail of the conversation (the new owner's events
        arrive through following), and say so."""
        with self.lock:
            self._leases.pop(cid, None)
            later = self.writer.drop(cid)
            self.truncate(cid, events[0].seq)
        count = len(events) + later
        self._log.report(
            f"lost:{cid}",
            f"Conversation {cid}: {count} event(s) were not saved: this instance stalled past its write lease and "
            "another instance took the conversation over.",
            kind="saving",
        )

    def describe(self, error: BaseException) -> tuple[str, str]:
        return describe_db_error(error)

    # --- following other instances (``store.postgres.follow`` listens on its own thread) -----------------------

    def follow(self, callback: Follower) -> Callable[[], None]:
        """Call ``callback(events)`` (on the listener thread) with the events other instances commit."""
        self._followers.append(callback)
        return lambda: self._followers.remove(callback) if callback in self._followers else None

    def absorb(self, known: dict[str, int], rows: list[tuple[object, ...]]) -> None:
        """Take in rows fetched beyond ``known``, unless this instance wrote or caught up meanwhile."""
        caught: list[AnyEvent] = []
        with self.lock:
            for row in rows:
                cid = str(row[0])
                if self.last_seq(cid) != known[cid] or cid in self._leases:
                    continue  # the next notification or check decides
                event = self._add_row(cid, *row[1:])
                known[cid] = event.seq if event is not None else known[cid]
                caught += [event] if event is not None else []
        if caught:
            self._deliver(caught)

    def _deliver(self, events: list[AnyEvent]) -> None:
        for follower in list(self._followers):
            try:
                follower(events)
            except Exception:  # noqa: BLE001 - a broken follower must not stop following
                log.exception("follower failed")
