"""Chat titles made by the model: when a chat asks for one, what the request says, and how the answer is cleaned
(docs/ledger.md, "Titles").

Guarantees (pure: no clock, no I/O):
- A title is an attempt of its own: ``started`` with ``purpose="title"`` and ``through`` (the answer it follows),
  under a side message outside the message tree (``ledger.compaction.side_started``): never on screen as a
  message, never in any model history, never the "live" attempt of the chat (``ConversationState.live_attempt``).
  Its text becomes the title through a ``titled`` event (``ledger.events.title``) once it completed.
- ``wants_title(conv, after)``: the answer ``after`` completed and the chat still has the title its first message
  gave it (never renamed, never given one: a branch keeps "… — branch from answer 3"), and fewer than
  ``MAX_TITLE_ATTEMPTS`` titles were asked for (a stopped or failed one is asked again after a later answer).
- ``title_request``: a system and a user message asking for 3 to 6 words about the first exchange of the chain,
  the user's text without its tags (``#drop``, ``#slow``...), both cut to ``EXCERPT_CHARS``.
- ``clean_title``: one line, no surrounding quotes or markup, no tags, no trailing punctuation, whitespace
  collapsed, at most ``TITLE_CHARS`` characters (cut at a word, with "…"); idempotent; "" when nothing is left.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ledger.state import ConversationState
from ledger.summary import first_line_title

TITLE_REQUEST = "Write a short title for the conversation below"  # how a title's request starts (demo.answers)
TITLE_CHARS = 60
EXCERPT_CHARS = 1_000
MAX_TITLE_ATTEMPTS = 2
SYSTEM = (
    "You name conversations. Answer with the title only: 3 to 6 words in the conversation's language, "
    "no quotes, no punctuation at the end."
)
_TAG = re.compile(r"(?<!\S)#\w+")
_PREFIX = re.compile(r"^(?:#+\s+|[-*•]\s+|title\s*:\s*)", re.IGNORECASE)
_QUOTES = "\"'`*_“”‘’«»„"
_TRAILING = ".,;:!?"


def without_tags(text: str) -> str:
    """The text without its tags (``#drop``), whitespace collapsed to single spaces."""
    return " ".join(_TAG.sub(" ", text).split())


def clean_title(raw: str) -> str:
    """The title shown for a model's answer (see the module's guarantees)."""
    previous, title = None, raw
    while title != previous:  # each pass only shortens it: the loop ends, and the result is a fixed point
        previous, title = title, _clean_once(title)
    return title


def _clean_once(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    title = lines[0] if lines else ""
    title = _PREFIX.sub("", title)
    title = without_tags(title).strip(_QUOTES + " ").rstrip(_TRAILING + " ")
    if len(title) > TITLE_CHARS:
        cut = title[: TITLE_CHARS - 1]
        cut = cut.rsplit(" ", 1)[0] if " " in cut and title[len(cut)] != " " else cut  # at a word's end
        title = cut.rstrip(_TRAILING + _QUOTES + " ") + "…"
    return title


def titles_asked(conv: ConversationState) -> int:
    """How many title attempts the chat has had."""
    return sum(1 for a in conv.attempts.values() if a.purpose == "title")


def wants_title(conv: ConversationState, after: str) -> bool:
    """Whether the model should name the chat now that the answer attempt ``after`` ended (see above)."""
    attempt = conv.attempts.get(after)
    if conv.deleted or conv.branched_from is not None or attempt is None:
        return False
    if attempt.purpose != "answer" or attempt.status != "complete":
        return False
    first = next((conv.messages[m] for m in conv.message_ids if conv.messages[m].role == "user"), None)
    if first is None or conv.title != first_line_title(first.text):
        return False  # renamed, created with a title, or a branch: the title is the person's
    return titles_asked(conv) < MAX_TITLE_ATTEMPTS


def title_request(conv: ConversationState, chain: Sequence[tuple[str, str | None]]) -> tuple[str, str]:
    """(system, user) texts of a title's request for the chain before it: the first question and answer."""
    question = answer = ""
    for message_id, attempt_id in chain:
        message = conv.messages[message_id]
        if message.role == "user" and not question:
            question = without_tags(message.text) or "(files only)"
        elif message.role == "assistant" and attempt_id and not answer:
            attempt = conv.attempts.get(attempt_id)
            answer = " ".join(attempt.text.split()) if attempt is not None else ""
    text = f"{TITLE_REQUEST} (3 to 6 words, nothing else).\n\nuser: {_excerpt(question)}\nassistant: {_excerpt(answer)}"
    return SYSTEM, text


def _excerpt(text: str) -> str:
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + " […]"
