"""The pure reducer: ``reduce(state, event) -> state`` and ``replay(events)``.

Guarantees:
- No clock reads, no id generation, no I/O: the same events always give the same state.
- Stale rule (``ledger.stale``): a chunk is rendered only when its attempt is the current attempt of its message
  and that attempt is still streaming (not closing, not closed); every other chunk is counted as stale.
- Chunk accounting: for every attempt, chunks_received == chunks_rendered + stale_chunks, and its text is the
  concatenation of its rendered chunks in chunk_seq order.
- Terminal attempt statuses (complete, interrupted, failed, empty) never change again.
- Nothing changes a deleted conversation.
- Linear: an event touches only its own conversation (a persistent map shares every other one) and, for a chunk,
  only its attempt (text kept as pieces, ``ledger.pieces``): a chunk costs the same with 10 or 10,000
  conversations, in a 2-turn or a 200-turn conversation, at the 10th or the 20,000th chunk of an answer. States
  stay immutable from the outside: an old state never reads text appended after it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import assert_never

from ledger.events import (
    PARTIAL_KEEPING_SOURCES,
    AnyEvent,
    Attached,
    Branched,
    Cancelled,
    CancelRequested,
    Chunk,
    Created,
    Deleted,
    Detached,
    Done,
    Failed,
    Persisted,
    Recovered,
    Renamed,
    RequestSent,
    Retrying,
    Selected,
    StaleChunk,
    StaleToolResult,
    Started,
    StepFinished,
    StepStarted,
    Submitted,
    ToolAwaitingApproval,
    ToolCalled,
    ToolCallStarted,
    ToolDispatched,
    ToolProgress,
    ToolResult,
    UpstreamClosed,
    VersionSelected,
)
from ledger.reduce_agent import step_finished, step_started, tool_call_started, tool_called, tool_result
from ledger.stale import stale_reason
from ledger.state import (
    EMPTY_STATE,
    TERMINAL_STATUSES,
    AttemptState,
    AttemptStatus,
    ConversationState,
    MessageState,
    State,
)
from ledger.summary import first_line_title
from ledger.tree import ROOT, legacy_tip
from ledger.updates import update_attempt, update_call, update_live


def reduce(state: State, event: AnyEvent) -> State:
    """Apply one event to the state and return the new state."""
    conv = state.conversations.get(event.conversation_id)
    if conv is None:
        conv = ConversationState(conversation_id=event.conversation_id, created_ts=event.ts)
    elif conv.deleted:
        return state
    if type(event) is Chunk and event.attempt_id in conv.attempts:
        new = _chunk(conv, event)  # the hot path: one replace of the conversation, stamps included
    else:
        new = _apply(conv, event)
        new = new._replace(last_seq=max(new.last_seq, event.seq), updated_ts=event.ts or new.updated_ts)
    return State(conversations=state.conversations.set(event.conversation_id, new))


def replay(events: Iterable[AnyEvent], state: State = EMPTY_STATE) -> State:
    """Fold ``reduce`` over events: the state the live system had after the same events."""
    for event in events:
        state = reduce(state, event)
    return state


def _apply(conv: ConversationState, event: AnyEvent) -> ConversationState:
    match event:
        case Created():
            origin = (event.branched_from, event.branched_at or "") if event.branched_from else conv.branched_from
            return conv._replace(title=event.title or conv.title, created_ts=event.ts, branched_from=origin)
        case Renamed():
            return conv._replace(title=event.title)
        case Submitted():
            return _submitted(conv, event)
        case Started():
            return _started(conv, event)
        case RequestSent():
            return update_attempt(
                conv, event.attempt_id, lambda a: a._replace(request_ids=(*a.request_ids, event.request_id))
            )
        case Chunk():
            return _chunk(conv, event)
        case StaleChunk():
            return update_attempt(
                conv,
                event.attempt_id,
                lambda a: a._replace(chunks_received=a.chunks_received + 1, stale_chunks=a.stale_chunks + 1),
                orphan=True,
            )
        case CancelRequested():
            return update_live(
                conv,
                event.attempt_id,
                lambda a: a._replace(status="closing", cancel_source=event.source, keep_partial=event.keep_partial),
            )
        case Cancelled():
            return update_live(conv, event.attempt_id, lambda a: _closed(a, event.source, a.keep_partial))
        case Recovered():
            return update_live(conv, event.attempt_id, lambda a: _closed(a, "restart", True))
        case Failed():
            return _failed(conv, event)
        case Done():
            return update_live(
                conv,
                event.attempt_id,
                lambda a: a._replace(status="complete", finish_reason=event.finish_reason, usage=event.usage),
            )
        case Persisted():
            return _persisted(conv, event)
        case Selected():
            return _selected(conv, event)
        case VersionSelected():
            return _version_selected(conv, event)
        case Branched():
            message = conv.messages.get(event.message_id)
            if message is None:
                return conv
            branches = (*message.branches, event.new_conversation_id)
            return conv._replace(messages={**conv.messages, message.message_id: message._replace(branches=branches)})
        case Detached():
            return conv._replace(detached=True)
        case Attached():
            return conv._replace(detached=False)
        case Deleted():
            return ConversationState(
                conversation_id=conv.conversation_id, title=conv.title, created_ts=conv.created_ts, deleted=True
            )
        case Retrying() | UpstreamClosed():
            return conv
        case StepStarted():
            return update_live(conv, event.attempt_id, lambda a: step_started(a, event))
        case StepFinished():
            return update_live(conv, event.attempt_id, lambda a: step_finished(a, event))
        case ToolCallStarted():
            return tool_call_started(conv, event)
        case ToolCalled():
            return update_live(conv, event.attempt_id, lambda a: tool_called(a, event))
        case ToolAwaitingApproval():
            return update_call(conv, event.attempt_id, event.call_id, lambda c: c._replace(phase="waiting"))
        case ToolDispatched():
            return update_call(
                conv,
                event.attempt_id,
                event.call_id,
                lambda c: c._replace(phase="running", server=event.server, dispatched_ts=event.ts),
            )
        case ToolProgress():
            return update_call(
                conv,
                event.attempt_id,
                event.call_id,
                lambda c: c._replace(progress=event.progress, total=event.total, progress_message=event.message),
            )
        case ToolResult():
            return tool_result(conv, event)
        case StaleToolResult():
            return update_attempt(
                conv, event.attempt_id, lambda a: a._replace(stale_tool_results=a.stale_tool_results + 1)
            )
        case _:
            assert_never(event)


def _submitted(conv: ConversationState, event: Submitted) -> ConversationState:
    if event.message_id in conv.messages:
        return conv
    edited = conv.messages.get(event.edit_of or "")
    parent = event.parent if event.parent is not None else edited.parent if edited is not None else legacy_tip(conv)
    message = MessageState(
        message_id=event.message_id,
        role="user",
        turn=event.turn,
        ts=event.ts,
        text=event.text,
        parent=parent,
        edit_of=event.edit_of,
    )
    key = parent or ROOT
    return conv._replace(
        title=conv.title or first_line_title(event.text),
        turn=max(conv.turn, event.turn),
        message_ids=(*conv.message_ids, event.message_id),
        messages={**conv.messages, event.message_id: message},
        children={**conv.children, key: (*conv.children.get(key, ()), event.message_id)},
        chosen={**conv.chosen, key: event.message_id},
    )


def _version_selected(conv: ConversationState, event: VersionSelected) -> ConversationState:
    message = conv.messages.get(event.message_id)
    if message is None or message.role != "user" or conv.live_attempt() is not None:
        return conv
    return conv._replace(chosen={**conv.chosen, message.parent or ROOT: message.message_id})


def _started(conv: ConversationState, event: Started) -> ConversationState:
    if event.attempt_id in conv.attempts:
        return conv
    messages = dict(conv.messages)
    message_ids = conv.message_ids
    message = messages.get(event.message_id)
    if message is None:
        message = MessageState(
            message_id=event.message_id,
            role="assistant",
            turn=event.turn,
            ts=event.ts,
            user_message_id=event.user_message_id,
        )
        message_ids = (*message_ids, event.message_id)
        user = messages.get(event.user_message_id)
        if user is not None:
            messages[user.message_id] = user._replace(reply_id=event.message_id)
    elif message.role != "assistant":
        return conv
    attempt = AttemptState(
        attempt_id=event.attempt_id,
        message_id=event.message_id,
        number=len(message.attempt_ids) + 1,
        model=event.model,
        trigger=event.trigger,
        started_ts=event.ts,
    )
    messages[event.message_id] = message._replace(
        attempt_ids=(*message.attempt_ids, event.attempt_id),
        current_attempt_id=event.attempt_id,
        selected_attempt_id=event.attempt_id,
    )
    return conv._replace(
        turn=max(conv.turn, event.turn),
        message_ids=message_ids,
        messages=messages,
        attempts=conv.attempts.set(event.attempt_id, attempt),
    )


def _chunk(conv: ConversationState, event: Chunk) -> ConversationState:
    attempt = conv.attempts.get(event.attempt_id)
    if attempt is None:
        return conv._replace(orphan_chunks=conv.orphan_chunks + 1)
    if stale_reason(conv, attempt.attempt_id, event.chunk_seq) is not None:
        new = attempt._replace(chunks_received=attempt.chunks_received + 1, stale_chunks=attempt.stale_chunks + 1)
    elif event.block == "reasoning":
        new = attempt._replace(
            reasoning_pieces=attempt.reasoning_pieces.plus(event.text),
            chunks_received=attempt.chunks_received + 1,
            chunks_rendered=attempt.chunks_rendered + 1,
            last_chunk_seq=event.chunk_seq,
        )
    else:
        new = attempt._replace(
            text_pieces=attempt.text_pieces.plus(event.text),
            chunks_received=attempt.chunks_received + 1,
            chunks_rendered=attempt.chunks_rendered + 1,
            last_chunk_seq=event.chunk_seq,
        )
    return conv._replace(
        attempts=conv.attempts.set(attempt.attempt_id, new),
        last_seq=max(conv.last_seq, event.seq),
        updated_ts=event.ts or conv.updated_ts,
    )


def _closed(attempt: AttemptState, source: str, keep_partial: bool) -> AttemptState:
    has_text = bool(attempt.text_pieces or attempt.reasoning_pieces) or any(
        c.answered for c in attempt.tool_calls.values()
    )
    keeps = keep_partial and source in PARTIAL_KEEPING_SOURCES
    status: AttemptStatus = "interrupted" if has_text and keeps else "empty"
    return attempt._replace(status=status, cancel_source=source, keep_partial=keeps)


def _failed(conv: ConversationState, event: Failed) -> ConversationState:
    if event.will_retry:
        return conv
    return update_live(
        conv,
        event.attempt_id,
        lambda a: a._replace(
            status="failed", error_type=event.error_type, error_summary=event.summary, http_status=event.http_status
        ),
    )


def _persisted(conv: ConversationState, event: Persisted) -> ConversationState:
    attempt = conv.attempts.get(event.attempt_id)
    if attempt is None:
        return conv
    status = attempt.status if attempt.status in TERMINAL_STATUSES else event.status
    new_attempt = attempt._replace(status=status, metrics=event.metrics, persisted=True)
    messages = dict(conv.messages)
    message = messages[attempt.message_id]
    if message.current_attempt_id == attempt.attempt_id:
        messages[message.message_id] = message._replace(metrics=event.metrics)
        user = messages.get(message.user_message_id or "")
        if user is not None:
            messages[user.message_id] = user._replace(metrics=event.metrics)
    return conv._replace(messages=messages, attempts=conv.attempts.set(attempt.attempt_id, new_attempt))


def _selected(conv: ConversationState, event: Selected) -> ConversationState:
    message = conv.messages.get(event.message_id)
    if message is None or event.attempt_id not in message.attempt_ids:
        return conv
    if any(conv.attempts[a].is_live for a in message.attempt_ids):
        return conv
    return conv._replace(
        messages={**conv.messages, message.message_id: message._replace(selected_attempt_id=event.attempt_id)}
    )
