"""Model history: the messages the next request sends, projected from the state (docs/ledger.md, model history).

Guarantees, per turn in order:
- the user message is always sent;
- the assistant message contributes the text of its *selected* attempt when that attempt completed, or was
  interrupted by a partial-keeping cancel (user, navigation, disconnect, shutdown, restart) with a non-empty
  prefix: exactly the text that was rendered;
- an empty interruption, a failed attempt, a discarded one (delete) or one still streaming contributes nothing;
- reasoning blocks are never sent back (they are shown to the user only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ledger.state import ConversationState


@dataclass(frozen=True, kw_only=True, slots=True)
class HistoryEntry:
    role: Literal["user", "assistant"]
    content: str
    message_id: str
    attempt_id: str | None = None

    def as_message(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


def model_history(conv: ConversationState, *, until_message_id: str | None = None) -> tuple[HistoryEntry, ...]:
    """The history for the next request; with ``until_message_id``, only what came before that message."""
    entries: list[HistoryEntry] = []
    for message_id in conv.message_ids:
        if message_id == until_message_id:
            break
        message = conv.messages[message_id]
        if message.role == "user":
            entries.append(HistoryEntry(role="user", content=message.text, message_id=message_id))
            continue
        attempt_id = message.selected_attempt_id
        attempt = conv.attempts.get(attempt_id) if attempt_id else None
        if attempt is not None and attempt.in_history:
            entries.append(
                HistoryEntry(
                    role="assistant", content=attempt.text, message_id=message_id, attempt_id=attempt.attempt_id
                )
            )
    return tuple(entries)


def as_messages(entries: tuple[HistoryEntry, ...]) -> list[dict[str, str]]:
    """The OpenAI-style message list for a request."""
    return [entry.as_message() for entry in entries]
