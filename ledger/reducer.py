"""The pure reducer: ``reduce(state, event) -> state`` and ``replay(events)``.

Guarantees:
- No clock reads, no id generation, no I/O: the same events always give the same state.
- Stale rule (``ledger.stale``): a chunk is rendered only when its attempt is the current attempt of its message
  and that attempt is still streaming (not closing, not closed); every other chunk is counted as stale.
- Chunk accounting: for every attempt, chunks_received == chunks_rendered + stale_chunks, and its text is the
  concatenation of its rendered chunks in chunk_seq order.
- Terminal attempt statuses (complete, interrupted, failed, empty) never change again.
- Nothing changes a deleted conversation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import assert_never

from ledger.events import (
    PARTIAL_KEEPING_SOURCES,
    AnyEvent,
    Attached,
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
    Started,
    Submitted,
    UpstreamClosed,
)
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

TITLE_CHARS = 60
_Change = Callable[[AttemptState], AttemptState]


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
    return State(conversations={**state.conversations, event.conversation_id: new})


def replay(events: Iterable[AnyEvent], state: State = EMPTY_STATE) -> State:
    """Fold ``reduce`` over events: the state the live system had after the same events."""
    for event in events:
        state = reduce(state, event)
    return state


def _apply(conv: ConversationState, event: AnyEvent) -> ConversationState:
    match event:
        case Created():
            return conv._replace(title=event.title or conv.title, created_ts=event.ts)
        case Renamed():
            return conv._replace(title=event.title)
        case Submitted():
            return _submitted(conv, event)
        case Started():
            return _started(conv, event)
        case RequestSent():
            return _update_attempt(
                conv, event.attempt_id, lambda a: a._replace(request_ids=(*a.request_ids, event.request_id))
            )
        case Chunk():
            return _chunk(conv, event)
        case StaleChunk():
            return _update_attempt(
                conv,
                event.attempt_id,
                lambda a: a._replace(chunks_received=a.chunks_received + 1, stale_chunks=a.stale_chunks + 1),
                orphan=True,
            )
        case CancelRequested():
            return _update_live(
                conv,
                event.attempt_id,
                lambda a: a._replace(status="closing", cancel_source=event.source, keep_partial=event.keep_partial),
            )
        case Cancelled():
            return _update_live(conv, event.attempt_id, lambda a: _closed(a, event.source, a.keep_partial))
        case Recovered():
            return _update_live(conv, event.attempt_id, lambda a: _closed(a, "restart", True))
        case Failed():
            return _failed(conv, event)
        case Done():
            return _update_live(
                conv,
                event.attempt_id,
                lambda a: a._replace(status="complete", finish_reason=event.finish_reason, usage=event.usage),
            )
        case Persisted():
            return _persisted(conv, event)
        case Selected():
            return _selected(conv, event)
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
        case _:
            assert_never(event)


def _submitted(conv: ConversationState, event: Submitted) -> ConversationState:
    if event.message_id in conv.messages:
        return conv
    message = MessageState(message_id=event.message_id, role="user", turn=event.turn, ts=event.ts, text=event.text)
    title = conv.title or _title(event.text)
    return conv._replace(
        title=title,
        turn=max(conv.turn, event.turn),
        message_ids=(*conv.message_ids, event.message_id),
        messages={**conv.messages, event.message_id: message},
    )


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
        attempts={**conv.attempts, event.attempt_id: attempt},
    )


def _chunk(conv: ConversationState, event: Chunk) -> ConversationState:
    attempt = conv.attempts.get(event.attempt_id)
    if attempt is None:
        return conv._replace(orphan_chunks=conv.orphan_chunks + 1)
    if stale_reason(conv, attempt.attempt_id, event.chunk_seq) is not None:
        new = attempt._replace(chunks_received=attempt.chunks_received + 1, stale_chunks=attempt.stale_chunks + 1)
    elif event.block == "reasoning":
        new = attempt._replace(
            reasoning=attempt.reasoning + event.text,
            chunks_received=attempt.chunks_received + 1,
            chunks_rendered=attempt.chunks_rendered + 1,
            last_chunk_seq=event.chunk_seq,
        )
    else:
        new = attempt._replace(
            text=attempt.text + event.text,
            chunks_received=attempt.chunks_received + 1,
            chunks_rendered=attempt.chunks_rendered + 1,
            last_chunk_seq=event.chunk_seq,
        )
    return conv._replace(
        attempts={**conv.attempts, attempt.attempt_id: new},
        last_seq=max(conv.last_seq, event.seq),
        updated_ts=event.ts or conv.updated_ts,
    )


def _closed(attempt: AttemptState, source: str, keep_partial: bool) -> AttemptState:
    has_text = bool(attempt.text or attempt.reasoning)
    keeps = keep_partial and source in PARTIAL_KEEPING_SOURCES
    status: AttemptStatus = "interrupted" if has_text and keeps else "empty"
    return attempt._replace(status=status, cancel_source=source, keep_partial=keeps)


def _failed(conv: ConversationState, event: Failed) -> ConversationState:
    if event.will_retry:
        return conv
    return _update_live(
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
    return conv._replace(messages=messages, attempts={**conv.attempts, attempt.attempt_id: new_attempt})


def _selected(conv: ConversationState, event: Selected) -> ConversationState:
    message = conv.messages.get(event.message_id)
    if message is None or event.attempt_id not in message.attempt_ids:
        return conv
    if any(conv.attempts[a].is_live for a in message.attempt_ids):
        return conv
    return conv._replace(
        messages={**conv.messages, message.message_id: message._replace(selected_attempt_id=event.attempt_id)}
    )


def _update_attempt(
    conv: ConversationState, attempt_id: str, change: _Change, orphan: bool = False
) -> ConversationState:
    attempt = conv.attempts.get(attempt_id)
    if attempt is None:
        return conv._replace(orphan_chunks=conv.orphan_chunks + 1) if orphan else conv
    return conv._replace(attempts={**conv.attempts, attempt_id: change(attempt)})


def _update_live(conv: ConversationState, attempt_id: str, change: _Change) -> ConversationState:
    attempt = conv.attempts.get(attempt_id)
    if attempt is None or attempt.status in TERMINAL_STATUSES:
        return conv
    return conv._replace(attempts={**conv.attempts, attempt_id: change(attempt)})


def _title(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"
