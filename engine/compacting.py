"""Compaction, run: before an answer whose request would not fit the model's input window, on the user's Compact,
and on Compact and retry (an answer the provider refused as too long); and the context meter's reading.

Guarantees:
- ``start`` is how an answer starts (Send, Edit, Retry: called under the conversation's lock instead of
  ``engine.starting.start_claimed``). When the model's window is known (``engine.context``) and the history the
  answer would send does not fit it, a compaction starts first: an attempt of its own (``started`` with
  ``purpose="compaction"``, ``ledger.compaction``) claimed and run by an ``AttemptWorker`` like any answer (request
  ids, chunks, the stale rule, timeouts, re-sends, the one cancel path: Stop, leaving, delete, shutdown). The
  answer's own ``started`` follows only once the compaction completed (``_then``), under the lock, and only if
  nothing else started meanwhile and the conversation still exists: a compaction that was stopped, failed or
  was discarded by a delete sends nothing more, and the history stays as it was.
- What a compaction summarizes (``_plan``): the oldest whole turns of the branch after the summary that applies
  already (that summary goes into the new one), so that the newest turns kept whole, the message being answered
  and a reserve for the summary fit ``KEEP`` of the window; a running turn is never part of it (nothing is
  compacted while an attempt runs). Nothing to summarize: the answer starts as it is (and may fail as too long).
- ``compact`` (the Compact button), ``compact_and_retry`` and ``retry`` (of a compaction) are refused with a
  sentence while an answer streams or when there is nothing to summarize; none of them appends anything then.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engine.context import Meter, count, measure, window_of
from engine.peers import Peers
from engine.provider import ProviderConfig
from engine.read_side import ReadSide
from engine.runtimes import Runtime, Runtimes
from engine.settings import EngineSettings
from engine.stamps import new_id
from engine.starting import Starting
from engine.worker import AttemptWorker, Workplace
from ledger import decide
from ledger.compaction import Chain, chain_key, choose_cut, cut_points, effective
from ledger.decide import InputRejected, NewAttempt
from ledger.events import AnyEvent, Retrying, Started, Submitted
from ledger.history import HistoryEntry, chain_history, model_history
from ledger.state import ConversationState
from ledger.tree import chain_before, selected_path

KEEP = 0.5  # the kept turns, the message answered and the summary's reserve fill at most this share of the window
RESERVE = 0.1  # of the window, kept for the summary itself
NOTHING = "There is nothing to summarize yet: the conversation has only its newest turn."
#: What follows a compaction once it completed: the event asking for an answer (or None) and its ``started``.
Next = Callable[[ConversationState], tuple[AnyEvent | None, Started] | None]


@dataclass(frozen=True, slots=True)
class Plan:
    through: str  # the chain key the summary reaches


class Compactor:
    def __init__(
        self, read: ReadSide, settings: EngineSettings, place: Workplace, runtimes: Runtimes,
        peers: Callable[[], Peers],
    ) -> None:  # fmt: skip
        self.read, self.settings, self.place, self.runtimes, self.peers = read, settings, place, runtimes, peers

    # --- the meter ---------------------------------------------------------------------------------------------

    async def meter(self, cid: str, model: str, instructions: str = "") -> Meter:
        """How full the next request of the shown branch is (without the message not yet typed), an agent preset's
        ``instructions`` included."""
        conv = decide.existing(self.read.conversation(cid))
        history = model_history(conv, tool_result_chars=self.settings.limits.tool_result_chars)
        return await measure(history, model, self.settings.files.read, instructions)

    # --- how an answer starts ----------------------------------------------------------------------------------

    async def start(self, rt: Runtime, first: Submitted | Retrying, started: Started, how: Starting) -> None:
        """Start the answer, or a compaction first when its request would not fit (called under ``rt.lock``)."""
        conv = how.view()
        chain, new = self._before(conv, first, started.message_id) if conv is not None else ([], ())
        told = how.provider.preset.instructions if how.provider.preset is not None else ""  # sent first, always
        plan = await self._plan(conv, chain, new, started.model, forced=True, told=told) if conv is not None else None
        if plan is None:
            await self._launch(rt, first, started, how)
            return
        if isinstance(first, Submitted):
            await self._compaction(rt, first, plan, started.model, started.turn, how, lambda _: (None, started))
        else:
            await self._compaction(rt, None, plan, started.model, started.turn, how, lambda c: _retry(c, started))

    async def compact(self, cid: str, model: str | None = None) -> str:
        """The Compact button: summarize the older turns of the shown branch now. Returns the compaction's id."""
        rt, how = self.runtimes.of(cid), self._how(cid, model)
        model = how.provider.model
        async with rt.lock:
            conv = self._idle(cid, rt)
            chain = [(m, conv.messages[m].selected_attempt_id) for m in selected_path(conv)]
            plan = await self._plan(conv, chain, (), model, forced=False)
            if plan is None:
                raise InputRejected(NOTHING)
            return await self._compaction(rt, None, plan, model, conv.turn, how, answer_waiting(model))

    async def compact_and_retry(self, cid: str, message_id: str, model: str | None = None) -> str:
        """An answer the provider refused as too long: summarize the turns before it, then retry it."""
        rt, how = self.runtimes.of(cid), self._how(cid, model)
        model = how.provider.model
        async with rt.lock:
            conv = self._idle(cid, rt)
            target = decide.retry_target(conv, message_id)
            chain, new = self._before(conv, None, target)
            plan = await self._plan(conv, chain, new, model, forced=False)
            if plan is None:
                raise InputRejected(NOTHING)

            def then(now: ConversationState) -> tuple[AnyEvent | None, Started] | None:
                return decide.retry(now, target, NewAttempt(new_id("att"), model), streaming=False)

            return await self._compaction(rt, None, plan, model, conv.turn, how, then)

    async def retry(self, cid: str, message_id: str, model: str | None = None) -> str:
        """Run a compaction that was stopped or failed again (a new attempt of its message); a message left
        waiting for it is answered afterwards."""
        rt, how = self.runtimes.of(cid), self._how(cid, model)
        model = how.provider.model
        async with rt.lock:
            conv = self._idle(cid, rt)
            message = conv.messages.get(message_id)
            if message is None or message.parent is None or message.user_message_id is not None:
                raise InputRejected("That summary no longer exists.")
            new = Started(
                conversation_id=cid, attempt_id=new_id("att"), message_id=message_id, user_message_id="",
                turn=conv.turn, model=model, trigger="retry", purpose="compaction", through=message.parent,
            )  # fmt: skip
            previous = message.selected_attempt_id or message.attempt_ids[-1]
            retrying = Retrying(conversation_id=cid, message_id=message_id, previous_attempt_id=previous,
                                attempt_id=new.attempt_id)  # fmt: skip
            await self._launch(rt, retrying, new, how)
            self._follow(rt, how, answer_waiting(model))
            return new.attempt_id

    # --- internals ---------------------------------------------------------------------------------------------

    def _idle(self, cid: str, rt: Runtime) -> ConversationState:
        conv = decide.existing(self.read.conversation(cid))
        if rt.active is not None or conv.live_attempt() is not None:
            raise InputRejected(decide.STILL_STREAMING)
        return conv

    def provider(self, model: str | None) -> ProviderConfig:
        """The model's provider (None: the app's default), or ``InputRejected`` when the app does not offer it."""
        provider = self.settings.provider_for(model)
        if provider is None:
            raise InputRejected(f"The model {model!r} is not one this app offers.")
        return provider

    def _how(self, cid: str, model: str | None) -> Starting:
        return Starting(self.provider(model), lambda: self.read.conversation(cid), self.place)

    def _before(
        self, conv: ConversationState, first: Submitted | Retrying | None, answer_id: str
    ) -> tuple[Chain, tuple[HistoryEntry, ...]]:
        """The chain before the message to be answered, and that message's own entry (always kept)."""
        limit = self.settings.limits.tool_result_chars
        if isinstance(first, Submitted):
            if first.edit_of:
                chain = chain_before(conv, first.edit_of)
            else:
                chain = [(m, conv.messages[m].selected_attempt_id) for m in selected_path(conv)]
            user = HistoryEntry(role="user", content=first.text, message_id=first.message_id,
                                attachments=first.attachments)  # fmt: skip
            return chain, (user,)
        full = chain_before(conv, answer_id)
        return full[:-1], chain_history(conv, full[-1:], limit, compacted=False)

    async def _plan(
        self,
        conv: ConversationState,
        chain: Chain,
        new: Sequence[HistoryEntry],
        model: str,
        *,
        forced: bool,
        told: str = "",
    ) -> Plan | None:
        """Where to cut (see the module's guarantees); None when nothing needs or can be summarized."""
        limit, read = self.settings.limits.tool_result_chars, self.settings.files.read
        window = await window_of(model)
        if forced and (
            window is None or await count((*chain_history(conv, chain, limit), *new), model, read, told) <= window
        ):
            return None  # it fits, or the window is unknown: no compaction by itself
        compacted = effective(conv, chain)
        rest = chain[compacted[0] if compacted else 0 :]
        bounds = [0, *cut_points(conv, rest), len(rest)] if rest else []
        groups = [rest[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
        if not groups or (not new and len(groups) < 2):
            return None  # nothing before the turn to keep
        costs = [await count(chain_history(conv, g, limit, compacted=False), model, read) for g in groups]
        fixed = await count(new, model, read, told)  # the instructions and the turn being answered are always sent
        if window is None:  # the provider said too long (Compact and retry), or the Compact button
            cut = len(groups) if new else len(groups) - 1
        else:
            cut = choose_cut(costs, fixed + int(window * RESERVE), int(window * KEEP))
        if not new:
            cut = min(cut, len(groups) - 1)  # the Compact button keeps the newest turn
        covered = (compacted[0] if compacted else 0) + sum(len(g) for g in groups[:cut])
        return Plan(through=chain_key(*chain[covered - 1]))

    async def _compaction(
        self, rt: Runtime, first: Submitted | None, plan: Plan, model: str, turn: int, how: Starting, then: Next
    ) -> str:
        started = Started(
            conversation_id=rt.conversation_id, attempt_id=new_id("att"), message_id=new_id("msg"),
            user_message_id="", turn=turn, model=model, purpose="compaction", through=plan.through,
        )  # fmt: skip
        await self._launch(rt, first, started, how)
        self._follow(rt, how, then)
        return started.attempt_id

    async def _launch(self, rt: Runtime, first: AnyEvent | None, started: Started, how: Starting) -> None:
        """``engine.starting.start_claimed``, with no first event for a compaction of its own."""
        peers = self.peers()
        await peers.claim(started.conversation_id, started.attempt_id)
        try:
            if first is not None:
                how.place.append(first)
            rt.active = AttemptWorker.start(started, how.provider, how.view, rt.lock, how.place)
        except BaseException:
            peers.unclaim(started.attempt_id)
            raise

    def _follow(self, rt: Runtime, how: Starting, then: Next) -> None:
        """Once the compaction running in ``rt`` completed: what ``then`` asks for, under the lock."""
        worker = rt.active
        if worker is None or worker.task is None:
            return
        task, attempt_id = worker.task, worker.run.attempt_id

        async def follow() -> None:
            await asyncio.wait([task])
            async with rt.lock:
                conv = self.read.conversation(rt.conversation_id)
                if conv is None or rt.active is not None or conv.live_attempt() is not None:
                    return  # deleted, or something else runs: nothing follows
                done = conv.attempts.get(attempt_id)
                nxt = then(conv) if done is not None and done.status == "complete" else None
                if nxt is not None:
                    await self._launch(rt, nxt[0], nxt[1], how)

        self.settings.spawn(follow(), f"after compaction {attempt_id}")


def _retry(conv: ConversationState, started: Started) -> tuple[AnyEvent | None, Started] | None:
    """A Retry that waited for its compaction: its ``retrying`` and ``started`` (the answer is still there)."""
    if started.message_id not in conv.messages:
        return None
    return decide.retry(conv, started.message_id, NewAttempt(started.attempt_id, started.model), streaming=False)


def answer_waiting(model: str) -> Next:
    """The answer of a user message left at the tip without one (its compaction was stopped or failed)."""

    def then(conv: ConversationState) -> tuple[AnyEvent | None, Started] | None:
        path = selected_path(conv)
        user = conv.messages[path[-1]] if path else None
        if user is None or user.role != "user" or user.reply_id is not None:
            return None
        return None, Started(
            conversation_id=conv.conversation_id, attempt_id=new_id("att"), message_id=new_id("msg"),
            user_message_id=user.message_id, turn=user.turn, model=model,
        )  # fmt: skip

    return then
