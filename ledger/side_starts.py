"""The ``started`` of the attempts nobody typed: a compaction, a compaction run again, the answer a compaction left
waiting, and a chat's title (docs/ledger.md).

Guarantees (pure: the ids are passed in, no clock, no I/O):
- ``compaction_started``: a compaction (``purpose="compaction"``) in the conversation's current turn, or in
  ``turn`` (the answer's it makes room for), its summary reaching ``through`` (``ledger.compaction``); it
  answers no user message.
- ``compaction_again``: a compaction that was stopped or failed, as a new attempt of its own message
  (``retrying`` + ``started``, trigger ``retry``, the same ``through``); refused with a sentence when that
  message is not a compaction's (``InputRejected``).
- ``waiting_answer``: the answer of the user message at the tip of the shown path when it has none (its
  compaction was stopped or failed before it could start); None otherwise.
- ``title_started``: a title of the chat after the answer attempt ``after`` (``purpose="title"``,
  ``through=after``, ``ledger.titles``); it answers no user message.
"""

from __future__ import annotations

from ledger.decide import InputRejected
from ledger.events import Retrying, Started
from ledger.state import ConversationState
from ledger.tree import selected_path

GONE = "That summary no longer exists."


def compaction_started(
    conv: ConversationState, *, attempt_id: str, message_id: str, model: str, through: str, turn: int | None = None
) -> Started:
    return Started(
        conversation_id=conv.conversation_id, attempt_id=attempt_id, message_id=message_id, user_message_id="",
        turn=conv.turn if turn is None else turn, model=model, purpose="compaction", through=through,
    )  # fmt: skip


def compaction_again(
    conv: ConversationState, message_id: str, *, attempt_id: str, model: str
) -> tuple[Retrying, Started]:
    message = conv.messages.get(message_id)
    if message is None or message.parent is None or message.user_message_id is not None:
        raise InputRejected(GONE)
    started = Started(
        conversation_id=conv.conversation_id, attempt_id=attempt_id, message_id=message_id, user_message_id="",
        turn=conv.turn, model=model, trigger="retry", purpose="compaction", through=message.parent,
    )  # fmt: skip
    previous = message.selected_attempt_id or message.attempt_ids[-1]
    retrying = Retrying(
        conversation_id=conv.conversation_id, message_id=message_id, previous_attempt_id=previous,
        attempt_id=attempt_id,
    )  # fmt: skip
    return retrying, started


def waiting_answer(conv: ConversationState, *, attempt_id: str, message_id: str, model: str) -> Started | None:
    path = selected_path(conv)
    user = conv.messages[path[-1]] if path else None
    if user is None or user.role != "user" or user.reply_id is not None:
        return None
    return Started(
        conversation_id=conv.conversation_id, attempt_id=attempt_id, message_id=message_id,
        user_message_id=user.message_id, turn=user.turn, model=model,
    )  # fmt: skip


def title_started(conv: ConversationState, after: str, *, attempt_id: str, message_id: str, model: str) -> Started:
    return Started(
        conversation_id=conv.conversation_id, attempt_id=attempt_id, message_id=message_id, user_message_id="",
        turn=conv.turn, model=model, purpose="title", through=after,
    )  # fmt: skip
