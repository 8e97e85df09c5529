"""Finding conversations: titles and the text of every message shown, matched word by word.

Guarantees: pure; a conversation matches when every word of the query (case-insensitive) is in its title, or all of
them are in one line of one message on its shown path (the user's text or the shown answer's text); each hit names the
conversation, the matching line (its first ``LINE_CHARS`` characters) and the message holding it; at most ``limit``
hits, in the order the conversations are given. ``title_hit`` matches a title alone (from a summary, without the
conversation's events) exactly as ``match`` matches it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ledger.continuation import shown_text
from ledger.state import ConversationState
from ledger.tree import selected_path

LINE_CHARS = 2_000  # of a matching line, kept for the result's snippet (the page shows a window around the match)


@dataclass(frozen=True, slots=True)
class Hit:
    conversation_id: str
    title: str
    line: str
    message_id: str | None = None


def search(conversations: Iterable[ConversationState], query: str, limit: int = 20) -> list[Hit]:
    words = query.lower().split()
    if not words:
        return []
    hits: list[Hit] = []
    for conv in conversations:
        hit = match(conv, words)
        if hit is not None:
            hits.append(hit)
            if len(hits) >= limit:
                break
    return hits


def title_hit(conversation_id: str, title: str, words: list[str]) -> Hit | None:
    """The hit of a conversation whose title has every word (lower-case ``words``), known without its events."""
    title = title or "New conversation"
    return (
        Hit(conversation_id=conversation_id, title=title, line=title)
        if all(w in title.lower() for w in words)
        else None
    )


def match(conv: ConversationState, words: list[str]) -> Hit | None:
    """The conversation's hit for lower-case ``words``: its title, else the first matching line shown."""
    title = conv.title or "New conversation"
    if all(w in title.lower() for w in words):
        return Hit(conversation_id=conv.conversation_id, title=title, line=title)
    for message_id in selected_path(conv):
        message = conv.messages[message_id]
        attempt = conv.attempts.get(message.selected_attempt_id or "")
        text = message.text if message.role == "user" else shown_text(conv, attempt) if attempt is not None else ""
        for line in text.splitlines():
            lowered = line.lower()
            if all(w in lowered for w in words):
                return Hit(
                    conversation_id=conv.conversation_id,
                    title=title,
                    line=line.strip()[:LINE_CHARS],
                    message_id=message_id,
                )
    return None
