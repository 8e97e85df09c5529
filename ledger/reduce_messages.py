"""The reducers of the message tree: user messages and their versions, assistant messages and their attempts,
which version and which attempt are shown, branches.

Guarantees: pure; an event for a message or attempt that is already there (a replayed ``submitted`` or
``started``) changes nothing. A user message hangs under its ``parent`` (an edit beside the message it edits, a
ledger written before parents under the shown path's last answer) and becomes the chosen child there. A new
attempt becomes its message's current and selected attempt. ``selected`` and ``version_selected`` change nothing
while an attempt of the message (or of the conversation) is live. The turn metrics of ``persisted`` are copied
onto the message and its user message only when the attempt is still its message's current one.
"""

from __future__ import annotations

from immutables import Map

from ledger.events import Branched, Persisted, Selected, Started, Submitted, VersionSelected
from ledger.state import TERMINAL_STATUSES, AttemptState, ConversationState, MessageState
from ledger.summary import first_line_title
from ledger.tree import ROOT, legacy_tip


def submitted(conv: ConversationState, event: Submitted) -> ConversationState:
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
        attachments=event.attachments,
        whole=event.whole,
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


def version_selected(conv: ConversationState, event: VersionSelected) -> ConversationState:
    message = conv.messages.get(event.message_id)
    if message is None or message.role != "user" or conv.live_attempt() is not None:
        return conv
    return conv._replace(chosen={**conv.chosen, message.parent or ROOT: message.message_id})


def started(conv: ConversationState, event: Started) -> ConversationState:
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
    return with_attempt(conv, event, message, message_ids, messages)


def with_attempt(
    conv: ConversationState,
    event: Started,
    message: MessageState,
    message_ids: tuple[str, ...],
    messages: dict[str, MessageState],
) -> ConversationState:
    """``conv`` with ``event``'s attempt added to ``message`` (as its newest, current and selected attempt), with
    ``message_ids`` and ``messages`` (a copy the caller may have changed) as its own: an answer's or a side one's."""
    attempt = AttemptState(
        attempt_id=event.attempt_id,
        message_id=event.message_id,
        number=len(message.attempt_ids) + 1,
        model=event.model,
        trigger=event.trigger,
        purpose=event.purpose,
        preset=(event.preset_id, event.preset_version or 1) if event.preset_id is not None else None,
        started_ts=event.ts,
        continues=event.continues,
    )
    messages[event.message_id] = message._replace(
        attempt_ids=(*message.attempt_ids, event.attempt_id),
        current_attempt_id=event.attempt_id,
        selected_attempt_id=event.attempt_id,
    )
    attempts = conv.attempts.set(event.attempt_id, attempt)
    return conv._replace(
        turn=max(conv.turn, event.turn),
        message_ids=message_ids,
        messages=messages,
        attempts=attempts,
        maybe_live=maybe_live(conv, event, message_ids, attempts),
    )


def maybe_live(
    conv: ConversationState, event: Started, message_ids: tuple[str, ...], attempts: Map[str, AttemptState]
) -> tuple[tuple[int, str], ...]:
    """``conv.maybe_live`` with ``event``'s attempt (now its message's current one) in its place, and without the
    attempts that ended or are no longer their message's current one: the few ``live_attempt`` looks at."""
    if message_ids and message_ids[-1] == event.message_id:
        place = len(message_ids) - 1  # a new answer (or a Retry of the last one): no search
    else:
        place = message_ids.index(event.message_id)
    before = conv.maybe_live
    if before is None:  # a state built by hand: every message's current attempt
        ids = enumerate(conv.messages[m].current_attempt_id for m in conv.message_ids)
        before = tuple((at, a) for at, a in ids if a is not None)
    kept = [(at, a) for at, a in before if at != place and attempts[a].status not in TERMINAL_STATUSES]
    return tuple(sorted([*kept, (place, event.attempt_id)], reverse=True))


def selected(conv: ConversationState, event: Selected) -> ConversationState:
    message = conv.messages.get(event.message_id)
    if message is None or event.attempt_id not in message.attempt_ids:
        return conv
    if any(conv.attempts[a].is_live for a in message.attempt_ids):
        return conv
    return conv._replace(
        messages={**conv.messages, message.message_id: message._replace(selected_attempt_id=event.attempt_id)}
    )


def persisted(conv: ConversationState, event: Persisted) -> ConversationState:
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


def branched(conv: ConversationState, event: Branched) -> ConversationState:
    message = conv.messages.get(event.message_id)
    if message is None:
        return conv
    branches = (*message.branches, event.new_conversation_id)
    return conv._replace(messages={**conv.messages, message.message_id: message._replace(branches=branches)})
