"""Branching to a new chat: the events that re-create one branch of a conversation in a new conversation.

Guarantees: pure (no clock, no ids: the copies keep their original ids and times); the new conversation replays to
the same messages along that branch: every user message with its parent and its files (the same sha256s: the branch
sends the same bytes), and for every answer only the attempt the branch followed (after the attempts it continues,
``ledger.continuation``), with its text per step, its reasoning, its answered tool calls with their whole results
(parts, structured content), and its end (complete, interrupted at exactly the prefix the model history had, failed,
empty) and final form; and the compaction that applies to the branch (``ledger.compaction.effective``), so the
branch inherits its compacted history. So the model history of the new chat equals the branch's history in the old
one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from engine.stamps import attempt_ids
from ledger.compaction import effective
from ledger.continuation import links
from ledger.events import (
    AnyEvent,
    Block,
    Cancelled,
    CancelSource,
    Chunk,
    Created,
    Done,
    ErrorType,
    Failed,
    FinalStatus,
    Persisted,
    Purpose,
    Recovered,
    Started,
    StepStarted,
    Submitted,
    ToolCalled,
    ToolResult,
    TurnMetrics,
)
from ledger.state import AttemptState, ConversationState

COPIED = "copied"


def branch_events(
    conv: ConversationState, chain: Sequence[tuple[str, str | None]], new_cid: str, *, at: str, title: str
) -> list[AnyEvent]:
    """``created`` (naming the origin) and the copy of ``chain`` ((message, attempt) pairs, root first)."""
    events: list[AnyEvent] = [
        Created(
            conversation_id=new_cid, title=title, branched_from=conv.conversation_id, branched_at=at, owner=conv.owner
        )
    ]
    parent: str | None = None
    for message_id, attempt_id in chain:
        message = conv.messages[message_id]
        if message.role == "user":
            events.append(
                Submitted(
                    conversation_id=new_cid,
                    ts=message.ts,
                    message_id=message_id,
                    turn=message.turn,
                    text=message.text,
                    parent=parent,
                    attachments=message.attachments,  # the same files, by hash: the branch sends the same bytes
                    whole=message.whole,  # a long text: the same blob
                    actor=conv.owner,  # team mode: only a conversation's owner sends in it
                )
            )
            parent = message_id
        elif attempt_id is not None and attempt_id in conv.attempts:
            for link in links(conv, conv.attempts[attempt_id]):  # a continued answer: its chain (ledger.continuation)
                events += _attempt_events(link, message.user_message_id or "", message.turn, new_cid)
            parent = attempt_id
    compacted = effective(conv, chain)  # the branch inherits its compacted history (``ledger.compaction``)
    if compacted is not None:
        summary = conv.messages[compacted[1]]
        events += _attempt_events(compacted[2], "", summary.turn, new_cid, through=summary.parent)
    return events


def _attempt_events(a: AttemptState, user_id: str, turn: int, cid: str, through: str | None = None) -> list[AnyEvent]:
    ids = attempt_ids(cid, a.attempt_id)
    events: list[AnyEvent] = [
        Started(
            **ids,
            ts=a.started_ts,
            message_id=a.message_id,
            user_message_id=user_id,
            turn=turn,
            model=a.model,
            purpose=cast(Purpose, a.purpose),
            through=through,
            continues=a.continues,
        )
    ]
    seq = 0
    for index in range(max(len(a.steps), 1)):
        if a.steps:
            events.append(StepStarted(**ids, ts=a.started_ts, step=a.steps[index].number))
        pieces: tuple[tuple[str, Block], ...] = ((_reasoning(a, index), "reasoning"), (a.step_text(index), "text"))
        for text, block in pieces:
            if text:
                events.append(Chunk(**ids, ts=a.started_ts, request_id=COPIED, chunk_seq=seq, text=text, block=block))
                seq += 1
        for call in a.step_calls(index):
            if not call.answered or call.status is None:
                continue
            step = a.steps[index].number
            events.append(ToolCalled(**ids, step=step, call_id=call.call_id, name=call.name, arguments=call.arguments))
            events.append(
                ToolResult(
                    **ids,
                    call_id=call.call_id,
                    status=call.status,
                    content=call.content,
                    size=call.size,
                    duration_ms=call.duration_ms,
                    parts=call.parts,
                    structured=call.structured,
                    whole=call.whole,
                )
            )
    events.append(_copied_end(a, cid))
    status = cast(FinalStatus, a.status)
    events.append(
        Persisted(
            **ids,
            message_id=a.message_id,
            status=status,
            text=a.text,
            metrics=a.metrics or TurnMetrics(),
        )
    )
    return events


def _copied_end(a: AttemptState, cid: str) -> AnyEvent:
    ids = attempt_ids(cid, a.attempt_id)
    if a.status == "complete":
        return Done(**ids, request_id=COPIED, finish_reason=a.finish_reason, usage=a.usage)
    if a.status == "failed":
        return Failed(
            **ids,
            request_id=COPIED,
            error_type=cast(ErrorType, a.error_type or "unknown"),
            http_status=a.http_status,
            summary=a.error_summary or "The answer failed.",
        )
    if a.cancel_source == "restart":
        return Recovered(**ids)
    source = cast(CancelSource, a.cancel_source or "user")
    return Cancelled(**ids, source=source, delivered_chars=len(a.text), chunk_count=a.chunks_rendered)


def _reasoning(a: AttemptState, index: int) -> str:
    if not a.steps:
        return a.reasoning
    start = a.steps[index].reasoning_start
    end = a.steps[index + 1].reasoning_start if index + 1 < len(a.steps) else len(a.reasoning)
    return a.reasoning[start:end]
