"""How an attempt ends: the terminal event, its final form (``persisted``) and the turn metrics; restart recovery.

Guarantees:
- Exactly one terminal event per attempt: ``cancelled`` (a cancel with no provider failure), ``done`` or
  ``failed``; then ``persisted`` with the status the reducer derived and the text that was rendered.
- Turn metrics carry the provider's usage when it sent one; otherwise tokens are counted locally and flagged
  ``estimated`` (always the case for a cancelled stream).
- ``recover`` runs at start-up only: an attempt still streaming after replay belonged to a process that died;
  it is finalized as interrupted with its persisted prefix (source ``restart``), once. A conversation another
  live instance is writing (PostgreSQL, ``ConversationBusyError``) is left to it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import cast

from engine.attempt import Append, AttemptRun, Broken, Completed
from engine.stamps import now_iso
from engine.tokens import count_messages, count_text
from ledger.errors import ConversationBusyError
from ledger.events import (
    Cancelled,
    Done,
    Failed,
    FinalStatus,
    Persisted,
    Recovered,
    ToolResult,
    TurnMetrics,
    Usage,
)
from ledger.state import TERMINAL_STATUSES, AttemptState, AttemptStatus, State


def finalize(active: AttemptRun) -> None:
    """Record how the attempt ended (cancelled, done or failed), then its final form with the turn metrics."""
    cid, aid = active.conversation_id, active.attempt_id
    if active.view() is None:
        return
    now_mono = time.monotonic()
    outcome = active.outcome
    usage = None
    if active.cancel is not None and not isinstance(outcome, Broken):
        active.append(
            Cancelled(
                conversation_id=cid,
                attempt_id=aid,
                source=active.cancel.source,
                delivered_chars=active.delivered_chars,
                chunk_count=active.chunk_count,
                last_chunk_seq=active.next_chunk_seq - 1 if active.chunk_count else None,
            )
        )
    elif isinstance(outcome, Completed):
        usage = outcome.usage
        active.append(
            Done(
                conversation_id=cid,
                attempt_id=aid,
                request_id=active.request_id or "",
                finish_reason=outcome.finish_reason,
                usage=usage,
            )
        )
    elif isinstance(outcome, Broken):
        f = outcome.failure
        active.append(
            Failed(
                conversation_id=cid,
                attempt_id=aid,
                request_id=outcome.request_id,
                error_type=f.error_type,
                http_status=f.http_status,
                summary=f.summary,
                retryable=f.retryable,
            )
        )
    conv = active.view()
    assert conv is not None, "a conversation is only deleted after its attempt was finalized"
    attempt = conv.attempts[aid]
    metrics = turn_metrics(active, usage, now_mono)
    active.append(
        Persisted(
            conversation_id=cid,
            attempt_id=aid,
            message_id=active.message_id,
            status=final_status(attempt.status),
            text=attempt.text,
            metrics=metrics,
        )
    )


def turn_metrics(active: AttemptRun, usage: Usage | None, now_mono: float) -> TurnMetrics:
    """Wait and output durations from the engine's clock; tokens reported by the provider, else estimated."""
    first, last = active.first_chunk_mono, active.last_chunk_mono
    wait = (first - active.sent_mono) * 1000 if first and active.sent_mono else None
    output = ((last or now_mono) - first) * 1000 if first else None
    if usage is None or usage.estimated:
        inputs = active.step_inputs or [active.messages]
        usage = Usage(
            input_tokens=sum(count_messages(active.model, messages) for messages in inputs),
            output_tokens=count_text(active.model, active.output_text),
            estimated=True,
        )
    return TurnMetrics(
        sent_at=active.sent_at,
        wait_ms=_round(wait),
        output_ms=_round(output),
        completed_at=now_iso(),
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cached_tokens=usage.cached_tokens,
        estimated=usage.estimated,
        steps=max(active.step, 1),
        tool_ms=round(active.tool_seconds * 1000, 1) if active.tool_seconds else None,
    )


def final_status(status: AttemptStatus) -> FinalStatus:
    """The status a finalized attempt has; finalizing one still live would be a bug, so it is refused loudly."""
    if status not in TERMINAL_STATUSES:
        raise AssertionError(f"finalizing an attempt that is still {status}")
    return cast(FinalStatus, status)


def recover(state: Callable[[], State], append: Append) -> list[str]:
    """Append ``recovered`` + ``persisted`` for every attempt still live in ``state()`` (a process died)."""
    recovered = []
    for conv in list(state().conversations.values()):
        if conv.deleted:
            continue
        for attempt in list(conv.attempts.values()):
            if not attempt.is_live:
                continue
            cid = conv.conversation_id
            try:
                _answer_open_calls(cid, attempt, append)
                append(Recovered(conversation_id=cid, attempt_id=attempt.attempt_id))
            except ConversationBusyError:
                continue  # a live instance on the same database is writing it: its attempt is not dead

            after = state().conversations[cid].attempts[attempt.attempt_id]
            metrics = TurnMetrics(
                completed_at=now_iso(), output_tokens=count_text(attempt.model, after.text), estimated=True
            )
            append(
                Persisted(
                    conversation_id=cid,
                    attempt_id=attempt.attempt_id,
                    message_id=attempt.message_id,
                    status=final_status(after.status),
                    text=after.text,
                    metrics=metrics,
                )
            )
            recovered.append(attempt.attempt_id)
    return recovered


RESTARTED = "Cancelled: the app stopped while this tool was running; its outcome is unknown."
NOT_RUN_RESTART = "Not run: the app stopped before this call was dispatched."


def _answer_open_calls(cid: str, attempt: AttemptState, append: Append) -> None:
    """Every complete tool call of a dead process's attempt gets its one result (a half-written one is omitted)."""
    for call in attempt.tool_calls.values():
        if call.answered or call.phase == "streaming":
            continue
        running = call.phase == "running"
        append(
            ToolResult(
                conversation_id=cid,
                attempt_id=attempt.attempt_id,
                call_id=call.call_id,
                status="cancelled" if running else "not_run",
                content=RESTARTED if running else NOT_RUN_RESTART,
                size=len(RESTARTED if running else NOT_RUN_RESTART),
            )
        )


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)
