"""``AttemptWorker``: the one owner of a running attempt, from ``started`` to ``persisted``; and the end of the
attempts a dead process left.

Guarantees:
- A worker owns its attempt's task, its record (``run``: an ``engine.turns.attempt.AttemptRun``) and its cancel, as
  Textual's ``Worker`` owns its task, state and cancel: ``start`` records ``started`` and spawns the task, which
  runs the turn (``engine.turns.turn``); ``cancel`` is the one cancel entry for every source: Stop, leaving, deleting,
  shutting down, another instance's request and the stream's own watchdog (source ``timeout``).
- The cancel entry, under the conversation's lock, does nothing when the attempt's end is decided already, when
  it was meant for another turn or attempt, or (a timeout) when the request that timed out ended meanwhile.
  Otherwise it records ``cancel_requested`` (so later chunks are stale), cancels the task and awaits it (the task
  closes the HTTP stream and records ``upstream_closed``), then ends the attempt. It runs to its end even when its
  caller is cancelled meanwhile; with the lock free, up to the task's cancel it runs in the caller's own step.
- ``lose`` (its owner claim is gone: another instance owns the end) stops the attempt at once and for good: the
  task is cancelled (the HTTP stream closed, tool calls cancelled), nothing more is appended (``_append``), no
  end is written, and the engine is told (``Workplace.ended``). Before the loss is heard, an end the ledger holds
  that this worker did not write (the other instance's, read in) already stops every append: it stays the last.
- ``_end`` is the only code that ends a running attempt, once: exactly one terminal event (``cancelled`` for a
  cancel, ``failed`` for a provider failure or a timeout, ``done``), then ``persisted`` with the status the reducer
  derived and the text that was rendered; then the engine is told (``Workplace.ended``), even if writing failed.
- ``recover`` ends, once, each attempt a dead process left live: ``recovered`` (source restart) and ``persisted``
  at its persisted prefix, after every complete tool call got its one result (a call that was running: status
  ``unknown``, ``ledger.ends.UNKNOWN_OUTCOME``, never a claimed cancel). A conversation another live
  instance is writing (``ConversationBusyError``) is left to it.
- No other module of the engine makes ``cancelled``, ``done``, ``recovered``, ``persisted`` or a final ``failed`` (a
  copy into a new chat aside, ``engine.commands.branching``); ``tests/engine/test_one_end.py`` reads the source for
  it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.provider import Failure, ProviderConfig, StreamStalled, classify
from engine.stamps import attempt_ids
from engine.tools import Answer, ToolHub
from engine.turns.attempt import Append, AttemptRun, Broken, Completed, View
from engine.turns.lock import Ask, ChatLock, always
from engine.turns.metrics import final_status, recovered_metrics, turn_metrics
from engine.turns.open_calls import answer_open_calls
from engine.turns.settings import EngineSettings
from engine.turns.turn import run_turn
from ledger.continuation_history import request_history
from ledger.ends import is_terminal
from ledger.errors import ConversationBusyError
from ledger.events import (
    AnyEvent,
    ApprovalScope,
    Cancelled,
    CancelRequested,
    CancelSource,
    Done,
    Failed,
    Persisted,
    Recovered,
    Started,
)
from ledger.history import HistoryEntry, as_messages
from ledger.state import ConversationState, State

log = logging.getLogger("ledger_chat.engine")


@dataclass(frozen=True, slots=True)
class Workplace:
    """What every attempt of one engine works with; ``ended`` hears of each attempt's end (under its lock)."""

    append: Append
    settings: EngineSettings
    tools: ToolHub | None
    ended: Callable[[AttemptWorker], None]


class AttemptWorker:
    def __init__(
        self,
        started: Started,
        provider: ProviderConfig,
        history: tuple[HistoryEntry, ...],
        view: View,
        lock: ChatLock,
        place: Workplace,
    ) -> None:
        self.lock, self.place = lock, place
        self.task: asyncio.Task[None] | None = None
        self.wrote_end = False  # this worker recorded its attempt's terminal event
        self.run = AttemptRun(
            conversation_id=started.conversation_id,
            turn=started.turn,
            message_id=started.message_id,
            user_message_id=started.user_message_id,
            attempt_id=started.attempt_id,
            model=provider.model,
            provider=provider,
            purpose=started.purpose,
            messages=as_messages(history),
            context_ids=tuple(e.message_id for e in history),
            append=self._append,
            view=view,
            time_out=self._timed_out,
        )

    @classmethod
    def start(
        cls, started: Started, provider: ProviderConfig, view: View, lock: ChatLock, place: Workplace
    ) -> AttemptWorker:
        """Record ``started`` and spawn the attempt's task (called under the conversation's lock)."""
        place.append(started)
        conv = view()
        assert conv is not None, "an attempt starts in a conversation that exists"
        limit = place.settings.limits.tool_result_chars
        history = request_history(
            conv, started.attempt_id, prefill=False, tool_result_chars=limit
        )  # (engine.turns.turn)
        worker = cls(started, provider, history, view, lock, place)
        worker.task = place.settings.spawn(worker._life(), f"attempt {started.attempt_id}")
        return worker

    def _append(self, event: AnyEvent) -> AnyEvent:
        """Every event of the attempt goes through here: none once its claim was lost (``lose``), and none once the
        ledger holds an end this worker did not write (another instance's, read in before the loss was heard)."""
        run = self.run
        if run.lost or (not self.wrote_end and ended_in(run.view(), run.attempt_id)):
            return event
        stored = self.place.append(event)
        self.wrote_end = self.wrote_end or is_terminal(event)
        return stored

    def lose(self) -> None:
        """The owner claim is gone (another instance owns the end): stop at once, writing nothing (see above)."""
        run = self.run
        if run.lost:
            return
        run.lost = True
        waiting: list[asyncio.Future[Any]] = [*run.approvals.values(), *(q.future for q in run.questions.values())]
        for future in waiting:
            future.cancel()
        if self.task is not None and not self.task.done():
            self.task.cancel()
        self.place.ended(self)

    @property
    def by_itself(self) -> bool:
        """The attempt ended (or is ending) without anyone asking: done, or failed (a timeout included)."""
        return self.run.outcome is not None

    def decide_tool(self, call_id: str, run_it: bool, scope: ApprovalScope = "once") -> bool:
        """The user's Run or Skip for a call waiting for approval; False when none waits under that id (the first
        answer wins)."""
        future = self.run.approvals.get(call_id)
        if future is None or future.done():
            return False
        future.set_result(Answer("run" if run_it else "skip", scope))
        return True

    async def cancel(
        self, source: CancelSource, keep_partial: bool = True, *, turn: int | None = None,
        attempt_id: str | None = None, requested_by: str | None = None, failure: Failure | None = None,
        still: Callable[[], bool] = always,
    ) -> bool:  # fmt: skip
        """The one cancel entry (see the module's guarantees); True when this call cancelled the attempt. With the
        lock free it is decided in the caller's own step (a free lock is taken without suspending): however busy the
        loop, ``cancel_requested`` and the task's cancel wait for no other turn of it."""
        ask = Ask(source, keep_partial, turn, attempt_id, requested_by, failure, still)
        if self.lock.busy:  # acquire would wait (held, or others wait for it): in a task of its own
            return await asyncio.shield(self._cancel(ask, waited=True))
        await self.lock.acquire()  # returns at once (asyncio.Lock's own test), never suspends here
        return self._decided(ask) and await asyncio.shield(self._cancel(ask))

    async def _cancel(self, ask: Ask, waited: bool = False) -> bool:
        """Holding the lock once decided: await the cancelled task (it closes the stream), end the attempt."""
        if waited:
            await self.lock.acquire()
            if not self._decided(ask):
                return False
        try:
            if self.task is not None and not self.task.done():
                with contextlib.suppress(asyncio.CancelledError):
                    await self.task
            self._end()
            return True
        finally:
            self.lock.release()

    def _decided(self, ask: Ask) -> bool:
        """Holding the lock: order the cancel, record ``cancel_requested`` and cancel the task (whose ``finally``
        closes the stream before the end is written); unless it is not this call's to order (lock released then)."""
        run = self.run
        try:
            mine = ask.turn in (None, run.turn) and ask.attempt_id in (None, run.attempt_id)
            if run.settled or not ask.still() or not mine:
                self.lock.release()
                return False  # ended, or meant for another turn or attempt (a Stop never stops a newer retry)
            run.order_cancel(ask.source, ask.keep_partial, ask.failure)
            run.append(CancelRequested(**run.ids, source=ask.source, keep_partial=ask.keep_partial, turn=run.turn,
                                       requested_by=ask.requested_by))  # fmt: skip
        except BaseException:
            self.lock.release()
            raise
        if self.task is not None and not self.task.done():
            self.task.cancel()
        return True

    def _timed_out(self, stalled: StreamStalled, still: Callable[[], bool]) -> None:
        """The stream's watchdog rang (a callback on the loop): the one cancel entry, source ``timeout``."""

        async def time_out() -> None:
            await self.cancel("timeout", keep_partial=True, failure=classify(stalled), still=still)

        self.place.settings.spawn(time_out(), f"timeout {self.run.attempt_id}")

    async def _life(self) -> None:
        run, tools = self.run, self.place.tools
        try:
            outcome = await run_turn(run, self.place.settings, tools and tools.of_chat(run.conversation_id))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a bug must end the attempt readably, not leave a spinner
            log.exception("stream task failed")
            outcome = Broken(classify(exc), run.request_id)
        if run.settled:
            return
        run.outcome = outcome
        async with self.lock:
            self._end()

    def _end(self) -> None:
        """The only code that ends a running attempt (see the module's guarantees)."""
        try:
            finalize(self.run)
        finally:
            self.place.ended(self)  # even a failed finalization never leaves the chat "streaming" forever


def ended_in(conv: ConversationState | None, attempt_id: str) -> bool:
    """Whether ``conv`` holds the end of attempt ``attempt_id``."""
    attempt = conv.attempts.get(attempt_id) if conv is not None else None
    return attempt is not None and not attempt.is_live


def finalize(run: AttemptRun) -> None:
    """Record how the attempt ended (cancelled, done or failed), then its final form with the turn metrics."""
    if run.view() is None or run.lost:
        return
    now_mono, outcome = time.monotonic(), run.outcome
    if run.cancel is not None and not isinstance(outcome, Broken):
        last = run.next_chunk_seq - 1 if run.chunk_count else None
        run.append(
            Cancelled(
                **run.ids,
                source=run.cancel.source,
                delivered_chars=run.delivered_chars,
                chunk_count=run.chunk_count,
                last_chunk_seq=last,
                usage=run.step_reported,
            )
        )
    elif isinstance(outcome, Completed):
        done = Done(
            **run.ids, request_id=run.request_id or "", finish_reason=outcome.finish_reason, usage=outcome.usage
        )
        run.append(done)
    elif isinstance(outcome, Broken):
        f = outcome.failure
        run.append(Failed(**run.ids, request_id=outcome.request_id, usage=run.step_reported, **f.fields()))
    conv = run.view()
    assert conv is not None, "a conversation is only deleted after its attempt was finalized"
    attempt = conv.attempts[run.attempt_id]
    metrics = turn_metrics(run, now_mono)
    status = final_status(attempt.status)
    run.append(Persisted(**run.ids, message_id=run.message_id, status=status, text=attempt.text, metrics=metrics))


def recover(state: Callable[[], State], append: Append) -> list[str]:
    """Append ``recovered`` + ``persisted`` for every attempt still live in ``state()`` (a process died)."""
    recovered = []
    for conv in list(state().conversations.values()):
        if conv.deleted:
            continue
        for attempt in list(conv.attempts.values()):
            if not attempt.is_live:
                continue
            cid, ids = conv.conversation_id, attempt_ids(conv.conversation_id, attempt.attempt_id)
            try:
                answer_open_calls(attempt, append, cid)
                append(Recovered(**ids))
            except ConversationBusyError:
                continue  # a live instance on the same database is writing it: its attempt is not dead
            after = state().conversations[cid].attempts[attempt.attempt_id]
            metrics = recovered_metrics(attempt.model, after.text)
            status = final_status(after.status)
            append(Persisted(**ids, message_id=attempt.message_id, status=status, text=after.text, metrics=metrics))
            recovered.append(attempt.attempt_id)
    return recovered
