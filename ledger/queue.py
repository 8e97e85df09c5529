"""The message queue, pure: how its events change a conversation's state, and the decisions about it (what to
queue, edit, remove, and which queued message is sent next), in the manner of ``ledger.decide``.

Guarantees:
- ``ConversationState.queue`` holds the messages queued and not yet sent nor removed, in the order they were
  queued; a ``submitted`` carrying a ``queue_id`` takes its message off the queue (the only way one is sent).
- The queue pauses (``queue_paused``, with the reason) when an answer ends otherwise than complete while messages
  wait: stopped, failed, or ended by a restart. A paused queue sends nothing by itself; Send now (a submitted with
  a queue id) resumes it, so does a Retry (the retried answer is what the queue waits for), and it is no longer
  paused once it is empty. Deleting the chat drops the queue (the reducer's ``deleted``).
- Decisions read the state and their arguments only (ids are passed in) and raise ``InputRejected`` with a sentence a
  person can act on. ``send_queued`` refuses a message that is not queued any more (sent or removed) before anything
  else: run under the conversation's lock by the engine (``engine.commands.queue``), it is why a queued message is
  never sent twice, whoever asks (two tabs, the automatic send racing a Send now).
- ``next_queued`` is the automatic send: the first queued message, only after an answer that completed, with
  nothing running and the queue not paused.
"""

from __future__ import annotations

from dataclasses import replace

from ledger.decide import InputRejected, NewAttempt, send
from ledger.events import (
    Attachment,
    MessageQueued,
    Persisted,
    QueuedEdited,
    QueuedItem,
    QueuedRemoved,
    QueueEvent,
    QueuePause,
    Started,
    Submitted,
)
from ledger.state import ConversationState

GONE = "That message is no longer queued: it was sent or removed."
STILL_RUNNING = "An answer is still running: the queued message is sent when it completes (or stop it first)."
NOTHING_RUNS = "Nothing is running: send the message instead of queueing it."


# --- the reducer's part ----------------------------------------------------------------------------------------


def reduce_queue(conv: ConversationState, event: QueueEvent) -> ConversationState:
    """``message_queued``, ``queued_edited``, ``queued_removed``."""
    queue = conv.queue
    if isinstance(event, MessageQueued):
        if pending(conv, event.queue_id) is not None:
            return conv
        item = QueuedItem(event.queue_id, event.text, event.attachments, event.model, event.ts)
        return conv._replace(queue=(*queue, item))
    if isinstance(event, QueuedEdited):
        edited = (i._replace(text=event.text) if i.queue_id == event.queue_id else i for i in queue)
        return conv._replace(queue=tuple(edited))
    return _without(conv, event.queue_id)


def queue_sent(conv: ConversationState, event: Submitted) -> ConversationState:
    """A submitted message that sends a queued one takes it off the queue and resumes the queue."""
    if event.queue_id is None:
        return conv
    return _without(conv, event.queue_id)._replace(queue_paused=None)


def queue_after(conv: ConversationState, event: Persisted) -> ConversationState:
    """An answer's end: one that did not complete pauses a queue that holds messages (saying why)."""
    attempt = conv.attempts.get(event.attempt_id)
    if not conv.queue or attempt is None or attempt.status == "complete":
        return conv
    return conv._replace(queue_paused=_why(attempt.status, attempt.cancel_source))


def queue_resumed(conv: ConversationState) -> ConversationState:
    """A Retry: the queue waits for the retried answer again."""
    return conv._replace(queue_paused=None) if conv.queue_paused is not None else conv


def _why(status: str, source: str | None) -> QueuePause:
    if status == "failed":
        return "failed"
    return "restart" if source in ("restart", "shutdown") else "stopped"


def _without(conv: ConversationState, queue_id: str) -> ConversationState:
    queue = tuple(i for i in conv.queue if i.queue_id != queue_id)
    if len(queue) == len(conv.queue):
        return conv
    return conv._replace(queue=queue, queue_paused=conv.queue_paused if queue else None)


# --- decisions -------------------------------------------------------------------------------------------------


def pending(conv: ConversationState, queue_id: str) -> QueuedItem | None:
    return next((i for i in conv.queue if i.queue_id == queue_id), None)


def enqueue(
    conv: ConversationState,
    queue_id: str,
    text: str,
    *,
    attachments: tuple[Attachment, ...] = (),
    model: str | None = None,
    streaming: bool,
) -> MessageQueued:
    """Queue a message (its text checked by the caller, ``decide.check_text``) while an answer runs."""
    if not streaming:
        raise InputRejected(NOTHING_RUNS)
    cid = conv.conversation_id
    return MessageQueued(conversation_id=cid, queue_id=queue_id, text=text, attachments=attachments, model=model)


def edit_queued(conv: ConversationState, queue_id: str, text: str) -> tuple[QueuedEdited, ...]:
    """A queued message's new text (nothing when it is the same); refused once it was sent or removed."""
    item = _still(conv, queue_id)
    if not text.strip() and not item.attachments:
        raise InputRejected("A queued message needs text. Remove it instead.")
    if text == item.text:
        return ()
    return (QueuedEdited(conversation_id=conv.conversation_id, queue_id=queue_id, text=text),)


def remove_queued(conv: ConversationState, queue_id: str) -> QueuedRemoved:
    _still(conv, queue_id)
    return QueuedRemoved(conversation_id=conv.conversation_id, queue_id=queue_id)


def next_queued(conv: ConversationState, *, after: str) -> QueuedItem | None:
    """The message the queue sends by itself once the attempt ``after`` ended: the first queued one, when that
    attempt completed, nothing runs and the queue is not paused; else None."""
    attempt = conv.attempts.get(after)
    if not conv.queue or conv.queue_paused is not None or attempt is None or attempt.status != "complete":
        return None
    return conv.queue[0] if conv.live_attempt() is None else None


def send_queued(
    conv: ConversationState,
    queue_id: str,
    new: NewAttempt,
    *,
    user_id: str,
    answer_id: str,
    streaming: bool,
    after: str | None = None,
) -> tuple[Submitted, Started] | None:
    """Send the queued message ``queue_id`` as the next turn (a submitted carrying its queue id, and the answer's
    start). ``after``: the automatic send once that attempt ended, None when nothing is to be sent by itself (it
    is no longer ``next_queued``); without it, a person's Send now (refused while an answer runs)."""
    item = _still(conv, queue_id)
    if after is not None and (streaming or next_queued(conv, after=after) != item):
        return None
    if streaming:
        raise InputRejected(STILL_RUNNING)
    submitted, started = send(
        conv, item.text, new, user_id=user_id, answer_id=answer_id, streaming=False, attachments=item.attachments
    )
    return replace(submitted, queue_id=queue_id), started


def _still(conv: ConversationState, queue_id: str) -> QueuedItem:
    item = pending(conv, queue_id)
    if item is None:
        raise InputRejected(GONE)
    return item
