"""The event store on PostgreSQL: the same protocol (``store.api``) as the TinyDB store, shared by several app
instances; the same writer thread (``store.writer``) and in-memory side (``store.memory``, eager: every live
conversation is held).

Design: each conversation has a *write lease* (``store.postgres.leases``), taken before its first append here
(catching up with what other instances committed); seqs are then assigned in memory and written in batches, each
checking the lease's token; the lease is given up once the conversation is quiet (``release_after``).

Guarantees:
- ``append`` assigns the next seq and returns at once; the event is readable through ``events()`` immediately and
  durable within ``flush_interval`` (250 ms), or at once for ``is_urgent`` events; each batch is one transaction.
- Seqs of a conversation are 1, 2, 3... without gaps or duplicates across every instance (primary key
  ``(conversation_id, seq)`` plus the lease fencing); events of one instance keep their append order.
- Events other instances commit reach this one (``store.postgres.follow``: notifications, and a check of every
  conversation every 5 s) and are handed to ``follow`` callbacks on the listener thread, in seq order.
- A deleted conversation refuses every later write, on every instance (its row is a tombstone; its ``deleted``
  row stays: ``tombstones``). Saving fails loudly, as in TinyDB (``health()``: the writer's rules).
- ``hold(attempt_id, epoch)``: later events of the attempt's run carry its claim's epoch (``store.postgres.owners``),
  checked by the database in the batch's transaction (migration 0003); no other event carries one (a seq given
  again after a dropped tail never inherits a dropped event's). A part the database refuses is not written (the
  batch's other conversations are), is dropped from memory with what is queued behind it, the conversation re-read,
  reported (``health().problems``) and to ``on_refused(conversation_id, attempt_ids)`` on the writer thread; never
  retried. A re-sent batch whose COMMIT succeeded before (its ack lost) counts as written.
- Pools check connections before use, and taking a lease retries once on a fresh connection: a restart costs one
  reconnect, no error. A lease that cannot be taken (the database down) raises ``StoreError`` and shows in
  ``health().unreachable`` until the database answers again (checked every second meanwhile).
- The database URL's password never reaches a log line, an error or ``where`` (``store.postgres.schema.redact_dsn``).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import replace

import psycopg

import store.postgres.leases as pg_leases
from ledger.ends import ATTEMPT_KINDS
from ledger.errors import ConversationDeletedError, StoreError
from ledger.events import AnyEvent
from store.health import ProblemLog, Reach, StoreHealth
from store.memory import Memory
from store.postgres.batch import Refused, catch_up, lost_message, refusal_message, write_parts
from store.postgres.follow import CHANNEL, Follower, Followers, listen
from store.postgres.pool import Conn, Pool, make_pool, once_more
from store.postgres.rows import SELECT, from_row
from store.postgres.schema import connect, describe_db_error, has_schema, migrate, redact_dsn
from store.writer import Batch, Batches, StoreStats, Writer, Written

log = logging.getLogger("store.postgres.store")
OnRefused = Callable[[str, list[str]], None]


class PgStore(Memory, Batches):
    """Persistent, append-only events in PostgreSQL. Open with ``PgStore.open(url)``."""

    def __init__(
        self, url: str, *, flush_interval: float = 0.25, read_only: bool = False, lease_seconds: float = 10.0,
        release_after: float = 0.25, on_refused: OnRefused | None = None,
    ) -> None:  # fmt: skip
        self._log = ProblemLog(log)
        self._reach, self._stop = Reach(self._log), threading.Event()
        lock = threading.Condition()
        super().__init__(lock, Writer(lock, self, self._log, flush_interval=flush_interval, name="ledger-batch-writer"))
        self.flush_interval, self.stats, self.where = flush_interval, StoreStats(), redact_dsn(url)
        self.read_only, self.on_refused = read_only, on_refused
        self.lease_seconds, self.release_after = lease_seconds, min(release_after, lease_seconds / 3)
        self.instance = pg_leases.instance_name()
        self._leases: dict[str, str] = {}  # conversation id -> token of the lease this instance holds
        self._epochs: dict[str, int] = {}  # attempt id -> epoch of its claim, while held here
        self._stamps: dict[tuple[str, int], int] = {}  # (conversation id, seq) of an unwritten event -> its epoch
        self._last_append: dict[str, float] = {}
        self._followers = Followers(log)
        self._pool: Pool | None = None
        listening = lambda: listen(url, self, self._stop, self._log)  # noqa: E731
        self._listener = threading.Thread(target=listening, name="ledger-pg-listener", daemon=True)

    @classmethod
    def open(
        cls, url: str, *, flush_interval: float = 0.25, read_only: bool = False, on_refused: OnRefused | None = None,
        **options: float,
    ) -> PgStore:  # fmt: skip
        """Apply migrations (unless ``read_only``), load every live conversation, start writing and listening.
        Raises ``DatabaseUnavailableError`` when the server cannot be reached."""
        store = cls(url, flush_interval=flush_interval, read_only=read_only, on_refused=on_refused, **options)
        if not read_only:
            migrate(url)
        with connect(url) as conn:
            if has_schema(conn):
                store._load(conn)
        if not read_only:
            store._pool = make_pool(url, "ledger", max_size=4, instance=store.instance)
            store.writer.start()
            store._listener.start()
        return store

    def _load(self, conn: Conn) -> None:
        deleted = {str(r[0]) for r in conn.execute("SELECT id FROM conversations WHERE deleted ORDER BY id")}
        self.restore({}, deleted)
        for cid, seq, ts, kind, payload in conn.execute(f"{SELECT} ORDER BY conversation_id, seq"):
            if cid not in deleted or kind == "deleted":  # a deletion keeps its own row: what the chat spent
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
            event = self.add(event)
            epoch = self._epochs.get(getattr(event, "attempt_id", "")) if event.KIND in ATTEMPT_KINDS else None
            self._stamps.pop((cid, event.seq), None)  # a seq given again never keeps a dropped event's epoch
            if epoch is not None:
                self._stamps[(cid, event.seq)] = epoch
            return event

    def _take_lease(self, cid: str, dead: str | None = None) -> None:
        """Under ``lock``: take the lease and catch up with what other instances committed."""
        assert self._pool is not None
        token, known, me, lease = pg_leases.new_token(), self.last_seq(cid), self.instance, self.lease_seconds

        try:
            last, missing = once_more(
                self._pool, lambda c: catch_up(c, cid, known, pg_leases.acquire(c, cid, me, token, lease, dead))
            )
            caught = [e for row in missing if (e := self._add_row(cid, *row[1:])) is not None]
        except ConversationDeletedError:
            self.bury(cid)
            raise
        except psycopg.Error as exc:
            self._reach.failed(describe_db_error(exc)[1])
            self.writer.wake()  # the writer thread asks the database every second until it answers (``housekeep``)
            raise StoreError(f"the conversation could not be opened for writing: {self._reach.reason}") from None
        self._reach.works()
        if self.last_seq(cid) != last:
            self._log.report(f"gap:{cid}", f"Conversation {cid}: events up to {last} could not all be read.")
        self._leases[cid] = token
        if caught:
            self._followers.deliver(caught)

    def hold(self, key: str, epoch: int | None = None, *, dead: str | None = None) -> None:
        """``hold(attempt_id, epoch)``: later events of the attempt's run (``ATTEMPT_KINDS``) carry ``epoch``.
        ``hold(cid, dead=...)``: take the write lease now (as ``append`` would), over from ``dead`` if named."""
        with self.lock:
            if epoch is not None:
                self._epochs[key] = epoch
                return
            self._lease_for_writing(key, dead)
            self.writer.wake()  # the writer thread schedules the lease's release (``housekeep``)

    def unhold(self, attempt_id: str) -> None:
        """Later events of the attempt carry no epoch (events already appended keep theirs)."""
        with self.lock:
            self._epochs.pop(attempt_id, None)

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
        """Write what is pending (for at most ``timeout`` s), give up the leases, disconnect; events not saved."""
        if self.read_only or self._pool is None or self._pool.closed:
            return 0
        unsaved = self.writer.stop(timeout)
        self._stop.set()
        with contextlib.suppress(psycopg.Error), self._pool.connection() as conn:  # else the leases expire anyway
            pg_leases.release(conn, list(self._leases.values()))
            conn.execute("SELECT pg_notify(%s, '')", (CHANNEL,))  # wakes the listener (every instance's: harmless)
        if self._listener.is_alive():
            self._listener.join(timeout=2.0)
        self._pool.close()
        return unsaved

    # --- one batch, on the writer thread (``store.writer`` decides when) ---------------------------------------

    def write(self, batch: Batch) -> Written:
        """One transaction, each conversation's part under its savepoint (``store.postgres.batch``)."""
        started = time.perf_counter()
        lost, refused = list[str](), dict[str, Refused]()
        if batch:
            assert self._pool is not None
            with self.lock:
                tokens = {cid: self._leases.get(cid, "") for cid in batch}
                epochs = {cid: [self._stamps.get((cid, e.seq)) for e in events] for cid, events in batch.items()}
            try:
                with self._pool.connection() as conn, conn.transaction():
                    lost, refused = write_parts(conn, batch, tokens, epochs, lease=self.lease_seconds, me=self.instance)
            except Exception as exc:  # noqa: BLE001 - the single writer must survive any write error
                return 0, batch, exc
            self._reach.works()
            with self.lock:
                self._stamps = {
                    k: v for k, v in self._stamps.items() if k[0] not in batch or k[1] > batch[k[0]][-1].seq
                }
            for cid in lost:
                self._lose(cid, batch[cid])
            for cid, why in refused.items():
                self._refuse(cid, batch[cid], why)
        saved = sum(len(events) for cid, events in batch.items() if cid not in refused and cid not in lost)
        self.stats.record(time.perf_counter() - started, saved)
        return saved, {}, None

    def housekeeping_in(self) -> float | None:
        return self.release_after if self._leases else (1.0 if self._reach.reason else None)

    def housekeep(self) -> None:
        """Give up the leases of conversations quiet for ``release_after`` with nothing pending."""
        if self._pool is None:
            return
        pool = self._pool  # the probe needs a writable database (a read-only one refuses nextval); epochs only grow
        self._reach.retry(lambda: once_more(pool, lambda conn: conn.execute("SELECT nextval('ledger_epochs')")))
        with self.lock:
            since = time.monotonic() - self.release_after
            quiet = [c for c in self._leases if not self.writer.unwritten(c) and self._last_append[c] < since]
            tokens = [self._leases.pop(c) for c in quiet]
        if not tokens:
            return
        with contextlib.suppress(psycopg.Error), self._pool.connection() as conn:  # else they expire by themselves
            pg_leases.release(conn, tokens)

    def _lose(self, cid: str, events: list[AnyEvent]) -> None:
        """The lease was lost: forget the unwritten tail (the new owner's events come by following); say so."""
        with self.lock:
            self._leases.pop(cid, None)
            later = self.writer.drop(cid)
            self.writer.discard(len(events))
            self.truncate(cid, events[0].seq)
        self._log.report(f"lost:{cid}", lost_message(cid, len(events) + later), kind="saving")

    def _refuse(self, cid: str, events: list[AnyEvent], why: Refused) -> None:
        """An epoch was refused: drop the part and what is queued behind it, give the lease back, re-read, say so."""
        with self.lock:
            later = self.writer.drop(cid)
            self.writer.discard(len(events))
            self.truncate(cid, events[0].seq)
            self._stamps = {k: v for k, v in self._stamps.items() if k[0] != cid}
            token, known = self._leases.pop(cid, None), self.last_seq(cid)
        attempts = sorted({a for e in events if (a := getattr(e, "attempt_id", None))})
        assert self._pool is not None
        rows: list[tuple[object, ...]] = []  # if the database cannot tell now, following catches up later
        with contextlib.suppress(psycopg.Error):
            rows = once_more(self._pool, lambda conn: catch_up(conn, cid, known, release=token))[1]
        with self.lock:
            caught = [e for r in rows if self.last_seq(cid) < int(str(r[1])) and (e := self._add_row(cid, *r[1:]))]
        self._log.report(f"fenced:{cid}", refusal_message(cid, len(events) + later, attempts, why), kind="fenced")
        if caught:
            self._followers.deliver(caught)
        if self.on_refused is not None:
            try:
                self.on_refused(cid, attempts)
            except Exception:  # noqa: BLE001 - the single writer must survive a broken callback
                log.exception("on_refused failed")

    def health(self) -> StoreHealth:
        return replace(self.writer.health(), unreachable=self._reach.reason)

    def describe(self, error: BaseException) -> tuple[str, str]:
        return describe_db_error(error)

    # --- following other instances (``store.postgres.follow`` listens on its own thread) -----------------------

    def follow(self, callback: Follower) -> Callable[[], None]:
        """Call ``callback(events)`` (on the listener thread) with the events other instances commit."""
        return self._followers.add(callback)

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
            self._followers.deliver(caught)
