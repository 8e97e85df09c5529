"""``Attempts``: the one door in and the one door out of an attempt's life, after Textual's ``WorkerManager``.

Guarantees:
- ``start`` is the only code that starts an attempt: called under the conversation's lock, it claims the attempt
  through ``Peers`` before anything is appended (a refused claim raises ``InputRejected`` and appends nothing;
  ``still``, asked once the claim is made, may give it back: nothing starts then), appends the event that asked
  for it (Send's ``submitted``, Retry's ``retrying``; none for Continue, a compaction or a title), then
  ``started`` and spawns its ``AttemptWorker``, which becomes the runtime's active attempt. When appending or
  spawning fails, the claim is given back and the error goes to the caller.
- Spend limits (``engine.spend``): an answer (Send, Edit, Retry, a queued message, Continue) whose chat's owner
  reached a limit is refused before anything is claimed or appended (``InputRejected`` with the guard's sentence);
  every step of every attempt is checked again before its request (``engine.turns.turn``).
- ``begin`` is how an answer starts (Send, Edit, Retry, a queued message): a compaction first when its request
  would not fit the model's window (``engine.attempts.compaction_plan``), the answer then started by the
  ``AfterCompaction`` policy once the compaction completed; ``compaction`` starts one and names what follows it.
- ``ended`` is the only code told of an end (``Workplace.ended``, under the conversation's lock, once per
  attempt, a lost one included): it clears the runtime's active attempt, then runs the after-end reactions,
  the ``Policy`` objects of ``policies`` in their declared order, each with the ``Ended`` record and this door.
  A reaction that raises is logged with its name and the next one runs; the runtime is never left busy.
- ``cancel`` is the one cancel path's front door for every source: the running attempt's owner cancels it
  (``AttemptWorker.cancel``), here or, through ``peers``, on the instance that runs it; True when an attempt
  was cancelled; it runs to its end even when the caller is cancelled meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from engine.attempts.compaction_plan import Planner
from engine.attempts.peers import LiveElsewhere, Peers
from engine.attempts.runtimes import Runtime, Runtimes
from engine.provider import ProviderConfig
from engine.read import ReadSide
from engine.stamps import new_id
from engine.tools import ToolHub
from engine.turns import AttemptWorker, EngineSettings, Workplace
from ledger import decide
from ledger.events import AnyEvent, CancelSource, Purpose, Retrying, Started, Submitted
from ledger.side_starts import compaction_started
from ledger.state import ConversationState

log = logging.getLogger("ledger_chat.engine")
#: What follows a compaction once it completed: the event asking for an answer (or None) and its ``started``.
Next = Callable[[ConversationState], tuple[AnyEvent | None, Started] | None]


@dataclass(frozen=True, slots=True)
class Ended:
    """An attempt's end, as the after-end reactions see it."""

    conversation_id: str
    attempt_id: str
    purpose: Purpose
    lost: bool  # its owner claim is gone: another instance ends it, nothing was written here
    by_itself: bool  # done or failed without anyone asking (a timeout included)


class Policy(Protocol):
    """An after-end reaction (the eventsourcing library's ``policy(event)``): called under the conversation's lock;
    anything that needs the lock again goes on a task of its own (``door.settings.spawn``)."""

    def ended(self, end: Ended, door: Attempts) -> None: ...


class Follows(Protocol):
    """What the door tells the compaction policy: ``then`` follows the compaction ``attempt_id`` once complete."""

    def wait(self, attempt_id: str, provider: ProviderConfig, then: Next) -> None: ...


class Attempts:
    def __init__(
        self, read: ReadSide, settings: EngineSettings, tools: ToolHub | None, runtimes: Runtimes, peers: Peers,
        planner: Planner, policies: tuple[Policy, ...], follows: Follows,
    ) -> None:  # fmt: skip
        self.read, self.settings, self.tools, self.runtimes, self.peers = read, settings, tools, runtimes, peers
        self.planner, self.policies, self.follows = planner, policies, follows
        self.place = Workplace(read.append, settings, tools, self.ended)

    # --- in ------------------------------------------------------------------------------------------------------

    async def start(
        self, rt: Runtime, first: AnyEvent | None, started: Started, provider: ProviderConfig,
        still: Callable[[], bool] | None = None,
    ) -> AttemptWorker | None:  # fmt: skip
        """Claim, append ``first`` and ``started``, spawn the worker (see the module's guarantees)."""
        if first is None and started.purpose == "answer":  # Continue, or an answer after its compaction
            await self.within_limit(started.conversation_id)
        await self.peers.claim(started.conversation_id, started.attempt_id)
        if still is not None and not still():
            self.peers.unclaim(started.attempt_id)
            return None
        try:
            if first is not None:
                self.place.append(first)
            cid = started.conversation_id
            rt.active = AttemptWorker.start(started, provider, lambda: self.read.conversation(cid), rt.lock, self.place)
        except BaseException:
            self.peers.unclaim(started.attempt_id)
            raise
        return rt.active

    async def begin(self, rt: Runtime, first: Submitted | Retrying, started: Started, provider: ProviderConfig) -> None:
        """Start an answer, or a compaction first when its request would not fit (under ``rt.lock``)."""
        await self.within_limit(rt.conversation_id)
        conv = self.read.conversation(rt.conversation_id)
        through = await self.planner.before_answer(conv, first, started, provider) if conv is not None else None
        if through is None:
            await self.start(rt, first, started, provider)
            return
        if isinstance(first, Submitted):
            await self.compaction(rt, first, through, provider, lambda _: (None, started), started.turn)
        else:
            await self.compaction(rt, None, through, provider, lambda now: _retry(now, started), started.turn)

    async def compaction(
        self, rt: Runtime, first: Submitted | None, through: str, provider: ProviderConfig, then: Next,
        turn: int | None = None,
    ) -> str:  # fmt: skip
        """Start a compaction whose summary reaches ``through``; ``then`` follows it once it completed."""
        conv = self.read.conversation(rt.conversation_id)
        assert conv is not None, "a compaction starts in a conversation that exists"
        started = compaction_started(
            conv, attempt_id=new_id("att"), message_id=new_id("msg"), model=provider.model, through=through,
            turn=turn,  # an answer's compaction runs in that answer's turn
        )  # fmt: skip
        await self.start(rt, first, started, provider)
        self.follows.wait(started.attempt_id, provider, then)
        return started.attempt_id

    async def within_limit(self, cid: str) -> None:
        """Refuse (``InputRejected``, the guard's sentence) an answer whose chat's owner reached a spend limit."""
        if self.settings.spend is not None:
            conv = self.read.conversation(cid)
            await self.settings.spend.check(conv.owner if conv is not None else None)

    # --- out -----------------------------------------------------------------------------------------------------

    def ended(self, worker: AttemptWorker) -> None:
        """The only code told of an end (see the module's guarantees)."""
        run = worker.run
        rt = self.runtimes.get(run.conversation_id)
        if rt is not None and rt.active is worker:
            rt.active = None
        end = Ended(run.conversation_id, run.attempt_id, run.purpose, run.lost, worker.by_itself)
        for policy in self.policies:
            try:
                policy.ended(end, self)
            except Exception:  # noqa: BLE001 - one broken reaction never stops the others
                log.exception("the after-end reaction %s failed for %s", type(policy).__name__, run.attempt_id)

    async def cancel(
        self, cid: str, source: CancelSource, *, keep_partial: bool = True, turn: int | None = None,
        attempt_id: str | None = None, requested_by: str | None = None,
    ) -> bool:  # fmt: skip
        """The one cancel path (see the module's guarantees); ``requested_by`` names the instance that asked."""
        worker = self.runtimes.active(cid)
        if worker is not None:  # decided in this step (no task in between), its own shield for the rest
            by = requested_by
            return await worker.cancel(source, keep_partial, turn=turn, attempt_id=attempt_id, requested_by=by)

        async def the_one_path() -> bool:
            live = self.elsewhere(cid)
            if live is None or turn not in (None, live.turn) or attempt_id not in (None, live.attempt_id):
                return False
            return await self.peers.cancel(cid, live, source, keep_partial)

        return await asyncio.shield(the_one_path())

    # --- what runs -----------------------------------------------------------------------------------------------

    def elsewhere(self, cid: str) -> LiveElsewhere | None:
        """Another instance's attempt in the conversation (none while one runs here)."""
        return None if self.runtimes.active(cid) is not None else self.peers.streaming(cid)

    def answering(self, cid: str) -> bool:
        """Whether an answer streams in the conversation, here or on another instance (a title never counts)."""
        return self.runtimes.answering(cid) or self.elsewhere(cid) is not None

    def streams(self, rt: Runtime) -> bool:
        """Whether an attempt runs in the conversation, here or on another instance."""
        return rt.active is not None or self.elsewhere(rt.conversation_id) is not None


def _retry(conv: ConversationState, started: Started) -> tuple[AnyEvent | None, Started] | None:
    """A Retry that waited for its compaction: its ``retrying`` and ``started`` (the answer is still there)."""
    if started.message_id not in conv.messages:
        return None
    new = decide.NewAttempt(started.attempt_id, started.model)
    return decide.retry(conv, started.message_id, new, streaming=False)
