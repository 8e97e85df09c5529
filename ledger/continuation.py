"""Continue: an answer that was cut short (stopped, left, timed out, or ended by the length limit) is continued by
a new attempt of the same assistant message (docs/ledger.md, "Continue").

Guarantees (pure; the engine appends, ``engine.commands.continuing``):
- ``links(conv, attempt)``: the attempts that make one answer, oldest first, ending with ``attempt``: each
  continuation's ``started.continues`` followed back within its own message (a missing id, an attempt of another
  message or one already seen ends the chain, so a damaged ledger never loops).
- A link *contributes* its text when the model history keeps it (``AttemptState.in_history``: complete, or
  interrupted with a kept prefix); a failed or empty continuation adds nothing and the answer stays what the links
  before it made. The answer's text is the contributing texts ``joined`` in order: what the page shows, Copy
  copies and every later request sends as one assistant message (``ledger.history.answer_entries``).
- ``joined(prefix, rest)``: the two texts concatenated, except that whitespace on both sides of the join is kept
  once (the continuation's): a prefill is sent without its trailing whitespace, and the model writes it again.
- ``continuation(conv, message_id, new, streaming=...)`` is the ``started`` of the new attempt (trigger
  ``continue``, ``continues`` = the last contributing link), or ``InputRejected`` with a sentence saying why: an
  answer still streaming, one that is not the latest of the shown path, a complete one (not cut by the length
  limit), one of which nothing was kept, a summary. Like a Retry, a continuation resumes a queue its answer's stop
  paused (``ledger.queue``: the reducer), so a message queued meanwhile is sent once it completes.
"""

from __future__ import annotations

from ledger.decide import STILL_STREAMING, InputRejected, NewAttempt
from ledger.events import Started
from ledger.state import AttemptState, ConversationState
from ledger.tree import selected_path

COMPLETE = "This answer is complete: there is nothing to continue (Retry asks again)."
NOT_LATEST = "Only the latest answer can be continued: later messages were written after this one."
NOTHING_KEPT = "Nothing of this answer was kept to continue from: use Retry to ask again."
FAILED = "A failed answer cannot be continued: use Retry to ask again."


def links(conv: ConversationState, attempt: AttemptState) -> tuple[AttemptState, ...]:
    """The attempts whose texts make ``attempt``'s answer, oldest first (just ``attempt`` when it continues none)."""
    chain = [attempt]
    seen = {attempt.attempt_id}
    while (parent_id := chain[-1].continues) is not None and parent_id not in seen:
        parent = conv.attempts.get(parent_id)
        if parent is None or parent.message_id != attempt.message_id:
            break
        seen.add(parent_id)
        chain.append(parent)
    return tuple(reversed(chain))


def joined(prefix: str, rest: str) -> str:
    """One text from a prefix and its continuation (whitespace at the join kept once: the continuation's)."""
    if prefix[-1:].isspace() and rest[:1].isspace():
        return prefix.rstrip() + rest
    return prefix + rest


def shown_text(conv: ConversationState, attempt: AttemptState) -> str:
    """The whole answer as shown: the contributing texts of the links before ``attempt``, then its own text."""
    text = ""
    for link in links(conv, attempt)[:-1]:
        if link.in_history:
            text = joined(text, link.text)
    return joined(text, attempt.text)


def base_of(conv: ConversationState, attempt: AttemptState) -> AttemptState | None:
    """The attempt a continuation of ``attempt``'s answer continues: the last link that contributes, if any."""
    return next((link for link in reversed(links(conv, attempt)) if link.in_history), None)


def refusal(conv: ConversationState, message_id: str, *, streaming: bool) -> str | None:
    """Why the answer ``message_id`` cannot be continued now, or None when it can."""
    message = conv.messages.get(message_id)
    if message is None or message.role != "assistant" or not message.attempt_ids:
        return "That answer does not exist."
    attempt = conv.attempts[message.selected_attempt_id or message.attempt_ids[-1]]
    if attempt.purpose != "answer":
        return "Only an answer can be continued."
    if streaming or conv.live_attempt() is not None:
        return STILL_STREAMING
    base = base_of(conv, attempt)
    if base is None:
        return FAILED if attempt.status == "failed" else NOTHING_KEPT
    if base.status == "complete" and base.finish_reason != "length":
        return COMPLETE
    path = selected_path(conv)  # (last: the only check that walks the conversation)
    if not path or path[-1] != message_id:
        return NOT_LATEST
    return None


def continuable(conv: ConversationState, message_id: str) -> bool:
    """Whether the page offers Continue on this answer (nothing streams in the chat)."""
    return refusal(conv, message_id, streaming=False) is None


def continuation(conv: ConversationState, message_id: str, new: NewAttempt, *, streaming: bool) -> Started:
    """The ``started`` of a new attempt continuing the answer ``message_id`` (or ``InputRejected``: why not)."""
    why = refusal(conv, message_id, streaming=streaming)
    if why is not None:
        raise InputRejected(why)
    message = conv.messages[message_id]
    base = base_of(conv, conv.attempts[message.selected_attempt_id or message.attempt_ids[-1]])
    assert base is not None  # (refusal checked it)
    return Started(
        conversation_id=conv.conversation_id,
        attempt_id=new.attempt_id,
        message_id=message_id,
        user_message_id=message.user_message_id or "",
        turn=message.turn,
        model=new.model,
        trigger="continue",
        preset_id=new.preset[0] if new.preset else None,
        preset_version=new.preset[1] if new.preset else None,
        continues=base.attempt_id,
    )
