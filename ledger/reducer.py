"""The pure reducer: ``reduce(state, event) -> state`` and ``replay(events)``.

Guarantees:
- No clock reads, no id generation, no I/O: the same events always give the same state.
- Stale rule (``ledger.stale``): a chunk is rendered only when its attempt is the current attempt of its message
  and that attempt is still streaming (not closing, not closed); every other chunk is counted as stale.
- Chunk accounting: for every attempt, chunks_received == chunks_rendered + stale_chunks, and its text is the
  concatenation of its rendered chunks in chunk_seq order.
- Terminal attempt statuses (complete, interrupted, failed, empty) never change again.
- One end per attempt (``ledger.ends``): its first terminal and its first ``persisted`` are applied; any other
  event of the attempt after its end (a second terminal, ``request_sent``, a step, a tool call or result, anything
  after ``persisted``) is late: only ``AttemptState.late_events`` counts it; its state, text, tool results and
  model history stay as they were. Chunks after the end stay stale chunks (the stale rule), never late.
- Nothing changes a deleted conversation. An admin's read and a share link's events (``ledger.shares``) are never
  the chat's last activity: only ``last_seq`` moves besides what they record.
- Linear: an event touches only its own conversation (a persistent map shares every other one) and, for a chunk,
  only its attempt (text kept as pieces, ``ledger.pieces``): a chunk costs the same with 10 or 10,000
  conversations, in a 2-turn or a 200-turn conversation, at the 10th or the 20,000th chunk of an answer. States
  stay immutable from the outside: an old state never reads text appended after it.
- One match over every kind (``assert_never``: a kind added to ``AnyEvent`` must be handled here); the longer
  per-kind reducers are in ``ledger.reduce_messages`` (the message tree), ``ledger.reduce_stream`` (chunks and
  how an attempt ends) and ``ledger.reduce_agent`` (steps and tool calls).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import assert_never

from ledger.compaction import is_side, side_started
from ledger.ends import is_late
from ledger.events import (
    AnyEvent,
    ApprovalAsked,
    ApprovalGiven,
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
    GrantRevoked,
    Handed,
    MessageQueued,
    Persisted,
    QuestionAnswered,
    QuestionAsked,
    QueuedEdited,
    QueuedRemoved,
    ReadBy,
    Recovered,
    Renamed,
    RequestSent,
    Retrying,
    Selected,
    ShareCreated,
    ShareOpened,
    ShareRevoked,
    ShareUpdated,
    StaleChunk,
    StaleToolResult,
    Started,
    StepFinished,
    StepStarted,
    Submitted,
    Titled,
    ToolAwaitingApproval,
    ToolCalled,
    ToolCallStarted,
    ToolDispatched,
    ToolProgress,
    ToolResult,
    ToolServerGone,
    ToolServerUsed,
    UpstreamClosed,
    VersionSelected,
    answered,
    asked,
    retitled,
)
from ledger.queue import queue_after, queue_resumed, queue_sent, reduce_queue
from ledger.reduce_agent import step_finished, step_started, tool_call_started, tool_called, tool_result
from ledger.reduce_approval import apply_approval
from ledger.reduce_messages import branched, persisted, selected, started, submitted, version_selected
from ledger.reduce_stream import chunk, closed, failed
from ledger.shares import reduce_share
from ledger.state import EMPTY_STATE, ConversationState, State
from ledger.updates import update_attempt, update_call, update_live

SHARE_KINDS = (ShareCreated, ShareUpdated, ShareRevoked, ShareOpened)


def reduce(state: State, event: AnyEvent) -> State:
    """Apply one event to the state and return the new state."""
    conv = state.conversations.get(event.conversation_id)
    if conv is None:
        conv = ConversationState(conversation_id=event.conversation_id, created_ts=event.ts, maybe_live=())
    elif conv.deleted:
        return state
    if type(event) is Chunk and event.attempt_id in conv.attempts:
        new = chunk(conv, event)  # the hot path: one replace of the conversation, stamps included
    elif is_late(conv, event):
        new = late(conv, getattr(event, "attempt_id", ""))
        new = new._replace(last_seq=max(new.last_seq, event.seq), updated_ts=event.ts or new.updated_ts)
    elif type(event) is ReadBy:  # an admin's read: recorded, never the chat's last activity
        read = (event.name or event.actor or "an admin", event.ts)
        new = conv._replace(reads=(*conv.reads, read), last_seq=max(conv.last_seq, event.seq))
    elif isinstance(event, SHARE_KINDS):  # a share link's life: recorded, never the chat's last activity
        new = reduce_share(conv, event)._replace(last_seq=max(conv.last_seq, event.seq))
    else:
        new = _apply(conv, event)
        new = new._replace(last_seq=max(new.last_seq, event.seq), updated_ts=event.ts or new.updated_ts)
    return State(conversations=state.conversations.set(event.conversation_id, new))


def replay(events: Iterable[AnyEvent], state: State = EMPTY_STATE) -> State:
    """Fold ``reduce`` over events: the state the live system had after the same events."""
    for event in events:
        state = reduce(state, event)
    return state


def late(conv: ConversationState, attempt_id: str) -> ConversationState:
    """An event of an attempt after its end (``ledger.ends``): counted on the attempt, nothing else changes."""
    return update_attempt(conv, attempt_id, lambda a: a._replace(late_events=a.late_events + 1))


def _apply(conv: ConversationState, event: AnyEvent) -> ConversationState:
    match event:
        case Created():
            origin = (event.branched_from, event.branched_at or "") if event.branched_from else conv.branched_from
            owner = event.owner if event.owner is not None else conv.owner
            return conv._replace(
                title=event.title or conv.title, created_ts=event.ts, branched_from=origin, owner=owner
            )
        case ReadBy():
            return conv  # folded in ``reduce`` (it leaves the last activity as it was)
        case ShareCreated() | ShareUpdated() | ShareRevoked() | ShareOpened():
            return reduce_share(conv, event)  # folded in ``reduce`` (``ledger.shares``)
        case Handed():  # only an unowned conversation is handed over: never taken from its owner
            return conv._replace(owner=event.owner) if conv.owner is None else conv
        case Renamed():
            return conv._replace(title=event.title)
        case Titled():
            return conv._replace(title=retitled(conv.title, event))
        case Submitted():
            return queue_sent(submitted(conv, event), event)
        case Started():
            new = side_started(conv, event) if is_side(conv, event) else started(conv, event)
            return queue_resumed(new) if event.trigger == "continue" else new  # as a Retry (ledger.continuation)
        case RequestSent():
            return update_attempt(
                conv,
                event.attempt_id,
                lambda a: a._replace(request_ids=(*a.request_ids, event.request_id), resend_note=None),
            )
        case Chunk():
            return chunk(conv, event)
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
            return update_live(conv, event.attempt_id, lambda a: closed(a, event.source, a.keep_partial))
        case Recovered():
            return update_live(conv, event.attempt_id, lambda a: closed(a, "restart", True))
        case Failed():
            return failed(conv, event)
        case Done():
            return update_live(
                conv,
                event.attempt_id,
                lambda a: a._replace(status="complete", finish_reason=event.finish_reason, usage=event.usage),
            )
        case Persisted():
            return queue_after(persisted(conv, event), event)
        case Selected():
            return selected(conv, event)
        case VersionSelected():
            return version_selected(conv, event)
        case Branched():
            return branched(conv, event)
        case Detached():
            return conv._replace(detached=True)
        case Attached():
            return conv._replace(detached=False)
        case Deleted():
            return ConversationState(
                conversation_id=conv.conversation_id, title=conv.title, created_ts=conv.created_ts, deleted=True,
                owner=event.owner if event.owner is not None else conv.owner, spent=event.usage, maybe_live=(),
            )  # fmt: skip
        case Retrying():
            return queue_resumed(conv)
        case UpstreamClosed():
            return conv
        case MessageQueued() | QueuedEdited() | QueuedRemoved():
            return reduce_queue(conv, event)
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
        case QuestionAsked():
            return update_call(
                conv, event.attempt_id, event.call_id, lambda c: c._replace(questions=asked(c.questions, event))
            )
        case QuestionAnswered():
            return update_call(
                conv, event.attempt_id, event.call_id, lambda c: c._replace(questions=answered(c.questions, event))
            )
        case ApprovalAsked() | ApprovalGiven() | GrantRevoked():
            return apply_approval(conv, event)
        case ToolServerUsed() | ToolServerGone():  # what is recorded of the server: no message, no text changes
            return conv._replace(tool_servers={**conv.tool_servers, event.server: event})
        case _:
            assert_never(event)
