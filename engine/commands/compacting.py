"""Compaction as a person asks for it: the Compact button, Compact and retry (an answer the provider refused as too
long), running a stopped or failed compaction again, and the context meter's reading.

Guarantees:
- A compaction is an attempt of its own (``started`` with ``purpose="compaction"``, ``ledger.side_starts``)
  started through the one door (``engine.attempts``): claimed and run by an ``AttemptWorker`` like any answer
  (request ids, chunks, the stale rule, timeouts, re-sends, the one cancel path: Stop, leaving, delete,
  shutdown). What follows it (a retry, the answer left waiting) starts only once it completed, by the
  ``AfterCompaction`` policy; a compaction that was stopped, failed or was discarded by a delete sends nothing
  more, and the history stays as it was. Where it cuts: ``engine.attempts.compaction_plan``.
- ``compact``, ``compact_and_retry`` and ``retry`` are refused with a sentence while an answer streams or when
  there is nothing to summarize; none of them appends anything then.
"""

from __future__ import annotations

from engine.attempts import Attempts, Next, Planner, Runtime
from engine.provider import Meter, ProviderConfig
from engine.stamps import new_id
from ledger import decide
from ledger.decide import InputRejected, NewAttempt
from ledger.events import AnyEvent, Started
from ledger.side_starts import compaction_again, waiting_answer
from ledger.state import ConversationState
from ledger.tree import selected_path

NOTHING = "There is nothing to summarize yet: the conversation has only its newest turn."


class Compactor:
    def __init__(self, door: Attempts, planner: Planner) -> None:
        self.door, self.planner = door, planner

    async def meter(self, cid: str, model: str, instructions: str = "") -> Meter:
        """How full the next request of the shown branch is (without the message not yet typed), an agent preset's
        ``instructions`` included."""
        return await self.planner.meter(decide.existing(self.door.read.conversation(cid)), model, instructions)

    async def compact(self, cid: str, model: str | None = None) -> str:
        """The Compact button: summarize the older turns of the shown branch now. Returns the compaction's id."""
        rt, provider = self.door.runtimes.of(cid), self.provider(model)
        async with rt.lock:
            conv = self._idle(cid, rt)
            chain = [(m, conv.messages[m].selected_attempt_id) for m in selected_path(conv)]
            through = await self.planner.plan(conv, chain, (), provider.model, forced=False)
            if through is None:
                raise InputRejected(NOTHING)
            return await self.door.compaction(rt, None, through, provider, answer_waiting(provider.model))

    async def compact_and_retry(self, cid: str, message_id: str, model: str | None = None) -> str:
        """An answer the provider refused as too long: summarize the turns before it, then retry it."""
        rt, provider = self.door.runtimes.of(cid), self.provider(model)
        async with rt.lock:
            conv = self._idle(cid, rt)
            target = decide.retry_target(conv, message_id)
            chain, new = self.planner.before(conv, None, target)
            through = await self.planner.plan(conv, chain, new, provider.model, forced=False)
            if through is None:
                raise InputRejected(NOTHING)

            def then(now: ConversationState) -> tuple[AnyEvent | None, Started] | None:
                return decide.retry(now, target, NewAttempt(new_id("att"), provider.model), streaming=False)

            return await self.door.compaction(rt, None, through, provider, then)

    async def retry(self, cid: str, message_id: str, model: str | None = None) -> str:
        """Run a compaction that was stopped or failed again (a new attempt of its message); a message left
        waiting for it is answered afterwards."""
        rt, provider = self.door.runtimes.of(cid), self.provider(model)
        async with rt.lock:
            conv = self._idle(cid, rt)
            retrying, started = compaction_again(conv, message_id, attempt_id=new_id("att"), model=provider.model)
            await self.door.start(rt, retrying, started, provider)
            self.door.follows.wait(started.attempt_id, provider, answer_waiting(provider.model))
            return started.attempt_id

    def provider(self, model: str | None) -> ProviderConfig:
        """The model's provider (None: the app's default), or ``InputRejected`` when the app does not offer it."""
        provider = self.door.settings.provider_for(model)
        if provider is None:
            raise InputRejected(f"The model {model!r} is not one this app offers.")
        return provider

    def _idle(self, cid: str, rt: Runtime) -> ConversationState:
        conv = decide.existing(self.door.read.conversation(cid))
        if rt.active is not None or conv.live_attempt() is not None:
            raise InputRejected(decide.STILL_STREAMING)
        return conv


def answer_waiting(model: str) -> Next:
    """The answer of a user message left at the tip without one (its compaction was stopped or failed)."""

    def then(conv: ConversationState) -> tuple[AnyEvent | None, Started] | None:
        started = waiting_answer(conv, attempt_id=new_id("att"), message_id=new_id("msg"), model=model)
        return (None, started) if started is not None else None

    return then
