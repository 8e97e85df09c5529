"""Several app instances on one PostgreSQL: other instances' events shown live here, one owner per running
attempt, Stop/Retry/delete/leave-policy cancels from any instance reaching that owner, and a dead owner's
attempts finalized by a survivor.

Guarantees:
- Events another instance commits (``PgStore.follow``, on the store's listener thread) go through a thread-safe
  queue to the event loop (``call_soon_threadsafe``) and are folded by the engine's ``absorb``, in seq order,
  never appended again: pages here show another instance's stream live. The cluster is made before the engine
  and is its ``Peers`` (``engine.commands.assembly.build_engine(peers=...)``); it sees the engine only through
  ``engine.attempts.peers.Local``, handed to ``start``; nothing is asked of it before.
- Every attempt is claimed (``claim``, ``store.postgres.owners``) before its first event is appended: a refused
  claim, or a database that cannot be reached, raises ``InputRejected`` and the attempt is not started (so no
  attempt runs without an owner). Claims are renewed every lease/3 s by a thread and released once the attempt's
  end is durable (at once when its events could not be appended: ``unclaim``).
- ``cancel`` asks the attempt's owner with the attempt id and turn (so a late request never touches a newer
  attempt, which the owner's one cancel path checks), asks again every second,
  and returns True once this engine has folded the attempt's end; False after lease + 3 s. An owner that is gone
  is not asked: its attempt is finalized here at once. ``writable`` (before a Send, Retry or delete) waits up to
  ``WRITABLE_WITHIN`` s for another instance to finish writing the conversation. A leave-policy cancel is sent
  once and not waited for: the owner decides.
- A request from another instance is served by ``app.peer_requests`` (the one cancel path, Run/Skip, a tool's
  question's answer); ``answer`` sends a person's Run/Skip for a call waiting on the owner the same way; the
  owner applies the first answer it gets (``Engine.decide_tool``), a late one is dropped. ``relay`` sends a share
  link's event this instance could not write to the instance holding the conversation's write lease. A remote
  tool server's sign-in coming back here while another instance waits for it goes there (``app.sign_in_relay``:
  ``sign_ins``, attached to this app's sign-ins by ``app.wiring``).
- ``sweep`` (at start, then every ``SWEEP_EVERY`` s) waits for proof: only an attempt live in the ledger whose
  owner row is in ``owners.expired()`` (its lease passed by the DATABASE's clock; a missing row is never proof)
  is finalized here, after ``take_over`` gave it a new epoch (the old owner's later writes are refused by the
  database), taking the conversation's write lease over and catching up: ``recovered`` (source restart) at its
  persisted prefix, a tool call that was running answered ``unknown`` (``engine.turns.worker.recover``). An attempt
  that turns out to have ended meanwhile is left alone. So a dead owner's attempts end within lease +
  ``SWEEP_EVERY`` s + one write, on one survivor (``take_over`` decides which).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
from collections.abc import Callable
from typing import Any

from app.claims import Claims
from app.peer_requests import LEAVING, serve
from app.sign_in_relay import SignInRelay
from engine.attempts import LiveElsewhere, Local
from engine.people import acting
from ledger.codec import to_dict
from ledger.errors import ConversationBusyError, ConversationDeletedError, StoreError
from ledger.events import AnyEvent, ApprovalScope, CancelSource, Persisted
from store.health import ProblemLog
from store.postgres import AttemptOwners, PgStore, Request, is_dead

log = logging.getLogger("ledger_chat.cluster")
LEASE = 5.0  # seconds an attempt's owner may go without renewing before a survivor finalizes the attempt
SWEEP_EVERY = 1.0
WRITABLE_WITHIN = 3.0  # seconds to wait for another instance to finish writing a conversation


class Cluster:
    """This instance's side of several instances on one database (``main.py`` starts it with ``--database-url``)."""

    def __init__(self, store: PgStore, url: str, *, lease: float = LEASE) -> None:
        self.store, self.me = store, store.instance
        self._local: Local | None = None  # the engine, from ``start`` on
        self.owners = AttemptOwners(
            url, self.me, lease=lease, on_request=self._requested, problems=ProblemLog(log), on_lost=self._lost
        )
        self.claims = Claims(store, self.owners, lambda: self.engine)
        self.sign_ins = SignInRelay(self.owners, lambda coro, name: self.engine.spawn(coro, name))
        store.on_refused = self.claims.refused  # the database refused an attempt's writes: its epoch is old
        self._inbox: queue.SimpleQueue[list[AnyEvent]] = queue.SimpleQueue()
        self._absorbing = False
        self._changed = asyncio.Event()
        self._answering = asyncio.Lock()  # approvals passed to owners, one at a time, in the order given here
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self._stops: list[Callable[[], None]] = []

    @property
    def engine(self) -> Local:
        assert self._local is not None, "the cluster was started with its engine"
        return self._local

    async def start(self, engine: Local) -> list[str]:
        """With ``engine`` (made with this cluster as its ``Peers``): follow the other instances, take requests,
        and finalize what dead owners left; returns those ids."""
        self._local, self._loop = engine, asyncio.get_running_loop()
        self.claims.loop = self._loop
        self._stops = [self.store.follow(self._followed), engine.read.subscribe(self._seen)]
        for cid in engine.read.loaded():  # committed between opening a loaded conversation and following
            self._inbox.put(list(self.store.events(cid)))
        self._drain()
        await asyncio.to_thread(self.owners.start)
        recovered = await self.sweep()
        self._sweeper = engine.spawn(self._sweep_forever(), "sweep for stopped instances")
        return recovered

    async def close(self) -> None:
        """After the engine's shutdown: stop sweeping, give up this instance's attempt leases."""
        for stop in self._stops:
            stop()
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
        await asyncio.to_thread(self.owners.close)

    # --- what this engine asks of the other instances (engine.peers.Peers) ------------------------------------

    async def claim(self, cid: str, attempt_id: str) -> None:
        await self.claims.claim(cid, attempt_id)

    def unclaim(self, attempt_id: str) -> None:
        self.claims.unclaim(attempt_id)

    def streaming(self, cid: str) -> LiveElsewhere | None:
        conv = self.engine.conversation(cid)
        live = conv.live_attempt() if conv is not None else None
        if conv is None or live is None:
            return None
        return LiveElsewhere(live.attempt_id, conv.messages[live.message_id].turn)

    async def cancel(self, cid: str, live: LiveElsewhere, source: CancelSource, keep_partial: bool) -> bool:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.owners.lease + 3.0
        attempt_id = live.attempt_id
        request: Request = {
            "cid": cid,
            "attempt": attempt_id,
            "turn": live.turn,
            "source": source,
            "keep": keep_partial,
        }
        if source in LEAVING:  # the owner decides (its own viewers count too): asked once, never waited for
            await self._ask(cid, attempt_id, request)
            return False
        while self._live(cid, attempt_id):
            if loop.time() > deadline:
                return False
            await self._ask(cid, attempt_id, request)
            await self._until(lambda: not self._live(cid, attempt_id), 1.0)
        return True

    async def _ask(self, cid: str, attempt_id: str, request: Request) -> None:
        """Send the request to the attempt's live owner; with none, finalize the attempt here (its owner is gone).
        The person who asked (team mode) goes with it: the owner records the command as theirs."""
        if (person := acting()) is not None:
            request = {**request, "actor": person}
        try:
            rows = await asyncio.to_thread(self.owners.owners, [attempt_id])
            alive = [r.owner for r in rows if not r.expired and r.owner != self.me and not is_dead(r.owner)]
            if alive:
                await asyncio.to_thread(self.owners.request, alive[0], request)
            else:
                await self.sweep([attempt_id])
        except StoreError as exc:
            log.warning("a cancel could not reach the attempt's owner: %s", exc)

    async def answer(self, cid: str, live: LiveElsewhere, call_id: str, run_it: bool, scope: ApprovalScope) -> None:
        request = {"cid": cid, "attempt": live.attempt_id, "kind": "approval", "call": call_id, "run": run_it}
        async with self._answering:  # sent in the order given here, so the owner sees the first one first
            await self._ask(cid, live.attempt_id, {**request, "scope": scope})

    async def reply(self, cid: str, live: LiveElsewhere, question_id: str, action: str, content: Any) -> None:
        request = {"cid": cid, "attempt": live.attempt_id, "kind": "question", "question": question_id}
        async with self._answering:  # in the order given here, like approvals
            await self._ask(cid, live.attempt_id, {**request, "action": action, "content": content})

    async def relay(self, event: AnyEvent, writer: str | None) -> bool:
        if writer is None or writer == self.me or is_dead(writer):
            return False
        request: Request = {"cid": event.conversation_id, "kind": "event", "event": to_dict(event)}
        try:
            await asyncio.to_thread(self.owners.request, writer, {**request, "actor": acting()})
        except StoreError as exc:
            log.warning("an event could not be relayed to the instance writing its chat: %s", exc)
            return False
        return True

    async def writable(self, cid: str) -> None:
        await self._hold(cid, asyncio.get_running_loop().time() + WRITABLE_WITHIN)

    async def _hold(self, cid: str, deadline: float) -> bool:
        """Take the conversation's write lease (another instance gives it up once its last events are written,
        within ``PgStore.release_after``) and fold what it wrote; False if it was still busy at ``deadline``."""
        loop = asyncio.get_running_loop()
        while True:
            try:
                await asyncio.to_thread(self.store.hold, cid)  # a database that does not answer: up to 2 x 3 s
                self._drain()
                return True
            except ConversationBusyError:
                if loop.time() > deadline:
                    return False
                await asyncio.sleep(0.05)  # the retry interval while another instance writes its last events
            except ConversationDeletedError:
                return True  # the caller's own append reports it

    def _live(self, cid: str, attempt_id: str) -> bool:
        conv = self.engine.conversation(cid)
        attempt = conv.attempts.get(attempt_id) if conv is not None else None
        return attempt is not None and attempt.is_live

    async def _until(self, condition: Callable[[], bool], timeout: float) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not condition() and loop.time() < deadline:
            changed = self._changed
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), deadline - loop.time())

    # --- requests other instances send to this one -------------------------------------------------------------

    def _lost(self, attempt_id: str) -> None:
        """On the ownership thread: this instance's claim on the attempt is gone (``Claims.lost``)."""
        self.claims.lost(attempt_id)

    def _requested(self, request: Request) -> None:
        """On the ownership thread."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._serve, request)

    def _serve(self, request: Request) -> None:
        if not self.sign_ins.serve(request):
            serve(self.engine, request)

    # --- following: other instances' events, and this engine's own --------------------------------------------

    def _followed(self, events: list[AnyEvent]) -> None:
        """On the store's listener thread (or inside an append that caught up)."""
        self._inbox.put(events)
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._drain)

    def _drain(self) -> None:
        self._absorbing = True
        try:
            while True:
                self.engine.read.absorb(self._inbox.get_nowait())
        except queue.Empty:
            pass
        finally:
            self._absorbing = False

    def _seen(self, event: AnyEvent) -> None:
        """Every event the engine folds: wake waiters; claim and release the attempts that run here."""
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()
        if self._absorbing:
            return
        if isinstance(event, Persisted):
            self.claims.ended(event.attempt_id)

    # --- dead owners -------------------------------------------------------------------------------------------

    async def sweep(self, only: list[str] | None = None) -> list[str]:
        """Finalize (as interrupted) the live attempts whose owner's lease expired by the database's clock (the rows
        of ``owners.expired()``: never an attempt without a row), each taken over first (``take_over``: a new
        epoch, so whatever the old owner still writes is refused); returns their ids."""
        rows = [r for r in await asyncio.to_thread(self.owners.expired) if only is None or r.attempt_id in only]
        recovered: list[str] = []
        for row in rows:
            cid, attempt_id = row.conversation_id, row.attempt_id
            conv = None if self.engine.is_running_here(cid) else self.engine.conversation(cid)
            attempt = conv.attempts.get(attempt_id) if conv is not None else None
            if attempt is None or not attempt.is_live:
                continue  # ended (its row is the janitor's), never started, or running here
            epoch = await asyncio.to_thread(self.owners.take_over, attempt_id, row.epoch)
            if epoch is None:
                continue  # renewed meanwhile, or another survivor took it over
            try:  # on a thread: a frozen owner's row locks last until the database ends its session (pool.py)
                await asyncio.to_thread(self.store.hold, cid, dead=row.owner)
            except (ConversationBusyError, ConversationDeletedError, StoreError):
                self.owners.forget(attempt_id)  # not renewed: it expires again and the next sweep looks again
                continue
            self.store.hold(attempt_id, epoch)
            self._drain()  # what the owner committed before it stopped
            try:
                recovered += self.engine.recover(only=[cid])
            finally:
                self.store.unhold(attempt_id)
        if recovered:
            log.warning("finalized %d answer(s) whose instance stopped: %s", len(recovered), ", ".join(recovered))
            if await self.engine.read.flush():
                await asyncio.to_thread(self.owners.release, recovered)
        return recovered

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(SWEEP_EVERY)
            try:
                await self.sweep()
            except StoreError as exc:
                log.warning("looking for attempts of stopped instances failed: %s", exc)
            except Exception:  # noqa: BLE001 - the sweeper must outlive a bug in one round
                log.exception("sweep failed")
