"""The event store on PostgreSQL: the same interface as ``ledger.store.Store``, shared by several app instances.

Design: ``append`` must return the event with its seq at once, on the event loop, while two instances may write
one database. So each conversation has a *write lease* (``ledger.pg_leases``): the first append an instance makes
to a conversation takes its lease in one short statement (it also reads the last committed seq and fetches any
events this instance has not seen), and from then on seqs are assigned in memory, exactly as the TinyDB store
does, and written in batches. A lease is given up once the conversation has been quiet for ``release_after`` with
nothing pending, so another instance can write it a moment later; while one instance holds it, another's append
raises ``ConversationBusyError`` (Stop, Retry and delete from another instance are requests to the owner, never
direct writes). Every batch transaction checks the lease's token: an instance that stalled past its lease and
was overtaken writes nothing for that conversation (reported), so seqs can never collide.

Guarantees:
- ``append`` assigns the next seq of the conversation and returns at once; the event is readable through
  ``events()`` immediately and durable within ``flush_interval`` (250 ms), or at once for ``is_urgent`` events;
  each batch is one transaction (rows copied in, the conversation's ``last_seq`` moved, a notification sent).
- Seqs of a conversation are 1, 2, 3... without gaps or duplicates across every instance (primary key
  ``(conversation_id, seq)`` plus the lease fencing); events of one instance keep their append order.
- Events other instances commit reach this one (``LISTEN ledger_events``, payload ``"<id> <last seq>"``; the
  reader fetches what it misses, and checks every conversation every ``CATCH_UP_EVERY`` s, so a lost
  notification only delays) and are handed to ``follow`` callbacks on the listener thread, in seq order.
- A deleted conversation refuses every later write, on every instance (its row is a tombstone; its events are
  removed except the ``deleted`` event itself). Saving fails loudly, as in the TinyDB store (``health()``).
- The database URL's password never reaches a log line, an error or ``where`` (``ledger.pg_schema.redact_dsn``).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

import psycopg
from psycopg_pool import ConnectionPool

from ledger import pg_leases
from ledger.batch_writer import BatchWriter
from ledger.errors import ConversationDeletedError, StoreError, UnknownConversationError
from ledger.events import AnyEvent, Created, Deleted, Renamed
from ledger.health import ProblemLog, StoreHealth
from ledger.pg_rows import COLUMNS, SELECT, column_text, from_row, to_row
from ledger.pg_schema import connect, describe_db_error, has_schema, migrate, redact_dsn
from ledger.store import StoreStats, is_urgent

log = logging.getLogger("ledger.pg_store")
CHANNEL = "ledger_events"
CATCH_UP_EVERY = 5.0
Follower = Callable[[list[AnyEvent]], None]


class PgStore(BatchWriter):
    """Persistent, append-only events in PostgreSQL. Open with ``PgStore.open(url)``."""

    def __init__(
        self,
        url: str,
        *,
        flush_interval: float = 0.25,
        read_only: bool = False,
        lease_seconds: float = 10.0,
        release_after: float = 0.25,
    ) -> None:
        super().__init__(flush_interval, ProblemLog(log))
        self._url = url
        self.where = redact_dsn(url)
        self.read_only = read_only
        self.lease_seconds, self.release_after = lease_seconds, min(release_after, lease_seconds / 3)
        self.instance = pg_leases.instance_name()
        self.stats = StoreStats()
        self._events: dict[str, list[AnyEvent]] = {}
        self._deleted: set[str] = set()
        self._leases: dict[str, str] = {}  # conversation id -> token of the lease this instance holds
        self._last_append: dict[str, float] = {}
        self._followers: list[Follower] = []
        self._stop = threading.Event()
        self._pool: ConnectionPool[psycopg.Connection[tuple[object, ...]]] | None = None
        self._listener = threading.Thread(target=self._listen_loop, name="ledger-pg-listener", daemon=True)

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
            store.start_writer()
            store._listener.start()
        return store

    def _load(self, conn: psycopg.Connection[tuple[object, ...]]) -> None:
        self._deleted = {str(r[0]) for r in conn.execute("SELECT id FROM conversations WHERE deleted ORDER BY id")}
        for cid, seq, ts, kind, payload in conn.execute(f"{SELECT} ORDER BY conversation_id, seq"):
            if cid in self._deleted:
                continue
            self._add_row(str(cid), seq, ts, kind, payload)

    def _add_row(self, cid: str, seq: object, ts: object, kind: object, payload: object) -> AnyEvent | None:
        try:
            event = from_row(cid, int(str(seq)), str(ts), str(kind), payload)  # type: ignore[arg-type]
        except (StoreError, ValueError, TypeError, KeyError) as exc:
            self._log.report(f"row:{cid}:{seq}", f"Conversation {cid}: event {seq} could not be read ({exc}).")
            return None
        self._events.setdefault(cid, []).append(event)
        if isinstance(event, Deleted):
            self._deleted.add(cid)
        return event

    # --- reading ---------------------------------------------------------------------------------------------

    def conversation_ids(self) -> list[str]:
        with self._cond:
            return [cid for cid in self._events if cid not in self._deleted]

    def events(self, conversation_id: str) -> tuple[AnyEvent, ...]:
        with self._cond:
            if conversation_id not in self._events:
                raise UnknownConversationError(conversation_id)
            return tuple(self._events[conversation_id])

    def all_events(self) -> list[AnyEvent]:
        with self._cond:
            return [e for cid, events in self._events.items() if cid not in self._deleted for e in events]

    def is_deleted(self, conversation_id: str) -> bool:
        return conversation_id in self._deleted

    def health(self) -> StoreHealth:
        with self._cond:
            return StoreHealth(
                saving_fails=self._saving_error,
                unsaved=self._appended - self._saved,
                failed_tries=self._failed_tries,
                problems=self._log.problems(),
            )

    @property
    def problems(self) -> list[str]:
        return self._log.messages()

    def follow(self, callback: Follower) -> Callable[[], None]:
        """Call ``callback(events)`` (on the listener thread) with the events other instances commit."""
        self._followers.append(callback)
        return lambda: self._followers.remove(callback) if callback in self._followers else None

    # --- writing ---------------------------------------------------------------------------------------------

    def append(self, event: AnyEvent) -> AnyEvent:
        """Give the event its seq (taking the conversation's write lease first if needed) and queue it.
        Raises ``ConversationDeletedError``, or ``ConversationBusyError`` while another instance writes it."""
        cid = event.conversation_id
        if self.read_only or self._pool is None:
            raise StoreError("this store was opened read-only")
        with self._cond:
            if cid in self._deleted:
                raise ConversationDeletedError(cid)
            if cid not in self._leases:
                self._take_lease(cid)
            events = self._events.setdefault(cid, [])
            event = replace(event, seq=(events[-1].seq + 1) if events else 1)
            events.append(event)
            self._last_append[cid] = time.monotonic()
            if isinstance(event, Deleted):
                self._deleted.add(cid)
            self.queue(cid, event, urgent=is_urgent(event))
        return event

    def _take_lease(self, cid: str) -> None:
        """Under ``_cond``: take the lease and catch up with what other instances committed."""
        assert self._pool is not None
        token = pg_leases.new_token()
        try:
            with self._pool.connection() as conn:
                last = pg_leases.acquire(conn, cid, self.instance, token, self.lease_seconds)
                known = self._last_seq(cid)
                missing = conn.execute(f"{SELECT} WHERE conversation_id = %s AND seq > %s ORDER BY seq", (cid, known))
                caught = [e for row in missing if (e := self._add_row(cid, *row[1:])) is not None]
        except ConversationDeletedError:
            self._deleted.add(cid)
            raise
        except psycopg.Error as exc:
            raise StoreError(f"the conversation could not be opened for writing: {describe_db_error(exc)[1]}") from None
        if self._last_seq(cid) != last:
            self._log.report(f"gap:{cid}", f"Conversation {cid}: events up to {last} could not all be read.")
        self._leases[cid] = token
        if caught:
            self._deliver(caught)

    def _last_seq(self, cid: str) -> int:
        events = self._events.get(cid)
        return events[-1].seq if events else 0

    async def flush(self) -> bool:
        return await asyncio.to_thread(self.flush_sync)

    def close(self, timeout: float = 10.0) -> int:
        """Write what is pending (for at most ``timeout`` s), give up every lease, stop listening, disconnect.
        Returns how many events could not be saved."""
        if self.read_only or self._pool is None or self._pool.closed:
            return 0
        unsaved = self.stop_writer(timeout)
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

    # --- the writer thread (``ledger.batch_writer`` decides when; this writes one batch) --------------------------

    def write_batch(
        self, batch: dict[str, list[AnyEvent]]
    ) -> tuple[int, dict[str, list[AnyEvent]], BaseException | None]:
        """One transaction: each conversation's fence, its rows and a notification."""
        assert self._pool is not None
        with self._cond:
            tokens = {cid: self._leases.get(cid, "") for cid in batch}
        started = time.perf_counter()
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
        elapsed = time.perf_counter() - started
        self.stats.flushes += 1
        self.stats.write_seconds += elapsed
        self.stats.worst_write_ms = max(self.stats.worst_write_ms, elapsed * 1000)
        self.stats.events_written += saved
        return saved, {}, None

    def housekeeping_in(self) -> float | None:
        return self.release_after if self._leases else None

    def housekeep(self) -> None:
        """Give up the leases of conversations quiet for ``release_after`` with nothing pending."""
        if self._pool is None:
            return
        with self._cond:
            now = time.monotonic()
            quiet = [
                c for c in self._leases if not self.has_pending(c) and now - self._last_append[c] > self.release_after
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
            with conn.cursor().copy(f"COPY events ({', '.join(COLUMNS)}) FROM STDIN") as copy:
                for event in events:
                    copy.write_row(to_row(event, self.instance))
            if deleted:
                conn.execute("DELETE FROM events WHERE conversation_id = %s AND seq < %s", (cid, last))
            conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, f"{cid} {last}"))
        return True

    def _lose(self, cid: str, events: list[AnyEvent]) -> None:
        """The lease was lost: forget this instance's unwritten tail of the conversation (the new owner's events
        arrive through following), and say so."""
        with self._cond:
            self._leases.pop(cid, None)
            later = self._pending.pop(cid, [])
            self._saved += len(later)
            self._events[cid] = [e for e in self._events.get(cid, []) if e.seq < events[0].seq]
        count = len(events) + len(later)
        self._log.report(
            f"lost:{cid}",
            f"Conversation {cid}: {count} event(s) were not saved: this instance stalled past its write lease and "
            "another instance took the conversation over.",
            kind="saving",
        )

    def describe(self, error: BaseException) -> tuple[str, str]:
        return describe_db_error(error)

    # --- the listener thread: events other instances commit --------------------------------------------------

    def _listen_loop(self) -> None:
        backoff = 0.1
        while not self._stop.is_set():
            try:
                with connect(self._url) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    backoff = 0.1
                    self._catch_up_all(conn)
                    checked = time.monotonic()
                    while not self._stop.is_set():
                        notes = [*conn.notifies(timeout=0.5, stop_after=1), *conn.notifies(timeout=0.01)]
                        behind = set()
                        for note in notes:
                            cid, _, seq = note.payload.rpartition(" ")
                            if seq.isdigit() and int(seq) > self._last_seq(cid):
                                behind.add(cid)
                        self._catch_up(conn, sorted(behind))
                        if time.monotonic() - checked > CATCH_UP_EVERY:
                            self._catch_up_all(conn)
                            checked = time.monotonic()
            except (psycopg.Error, StoreError) as exc:
                self._log.report("listen", f"Following other instances was interrupted ({describe_db_error(exc)[1]}).")
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 2.0)

    def _catch_up_all(self, conn: psycopg.Connection[tuple[object, ...]]) -> None:
        rows = conn.execute("SELECT id, last_seq FROM conversations WHERE last_seq > 0").fetchall()
        self._catch_up(conn, [str(cid) for cid, last in rows if int(str(last)) > self._last_seq(str(cid))])

    def _catch_up(self, conn: psycopg.Connection[tuple[object, ...]], cids: list[str]) -> None:
        """Fetch, in one query, what these conversations have beyond what this instance holds."""
        if not cids:
            return
        known = {cid: self._last_seq(cid) for cid in cids}
        rows = conn.execute(
            f"{SELECT} e JOIN unnest(%s::text[], %s::bigint[]) AS k(cid, known) "
            "ON e.conversation_id = k.cid AND e.seq > k.known ORDER BY e.conversation_id, e.seq",
            (list(known), list(known.values())),
        ).fetchall()
        caught: list[AnyEvent] = []
        with self._cond:
            for row in rows:
                cid = str(row[0])
                if self._last_seq(cid) != known[cid] or cid in self._leases:
                    continue  # this instance wrote or caught up meanwhile; the next notification or check decides
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
