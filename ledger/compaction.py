"""Compaction: an attempt of its own kind that summarizes the earlier turns of a branch, and where the model
history may be cut for it (docs/ledger.md, compaction).

Guarantees (pure: no clock, no I/O, no token counter of its own):
- A compaction is ``started`` with ``purpose="compaction"`` and ``through``: the attempt (or user message) its
  summary reaches. ``side_started`` gives it a message of its own *outside* the message tree (no user message,
  never anyone's reply, ``parent`` = ``through``): the screen keeps every message, the compaction shows as a
  divider after ``through``; its attempt runs like any other (chunks, stale rule, cancel, failure, one end).
- ``effective(conv, chain)``: the compaction that applies to a chain of (message, attempt) pairs: its attempt
  (the selected one of its message) completed with text, and its ``through`` is on the chain; the one reaching
  furthest wins. A compaction summarizes only a prefix of whole turns that ended (``cut_points``), so the turns
  kept after it are whole: a tool call is never separated from its result, an interrupted prefix stays as it was,
  a running turn is never summarized. A branch that does not pass through ``through`` (an edit of an older
  message) is not affected by it.
- ``choose_cut(costs, fixed, budget)``: how many of the oldest turns to summarize so that the turns kept (the
  newest, whole) and ``fixed`` (what is always sent) fit in ``budget``, given each turn's cost.
- ``summary_request_text``: the one user message a compaction sends (``SUMMARY_REQUEST`` first, then the turns as
  a transcript); ``SUMMARY_PREFIX`` opens the summary's system message in later requests.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ledger.events import Started
from ledger.reduce_messages import with_attempt
from ledger.state import AttemptState, ConversationState, MessageState

SUMMARY_REQUEST = "Summarize the earlier conversation below"
SUMMARY_PREFIX = "Summary of the earlier conversation (earlier turns were compacted):"
TRANSCRIPT_CHARS = 2_000  # each message of the transcript a compaction sends is cut to this many characters

Chain = Sequence[tuple[str, str | None]]


def is_side(conv: ConversationState, event: Started) -> bool:
    """Whether a ``started`` is not an answer's, or names a side message (then only one of its purpose counts)."""
    message = conv.messages.get(event.message_id)
    return event.purpose != "answer" or (message is not None and purpose_of(conv, message) != "answer")


def side_started(conv: ConversationState, event: Started) -> ConversationState:
    """A ``started`` of another purpose than an answer: the attempt, under a message of its own outside the tree."""
    if event.attempt_id in conv.attempts:
        return conv
    message = conv.messages.get(event.message_id)
    message_ids = conv.message_ids
    if message is None:
        message = MessageState(
            message_id=event.message_id, role="assistant", turn=event.turn, ts=event.ts, parent=event.through
        )
        message_ids = (*message_ids, event.message_id)
    elif purpose_of(conv, message) != event.purpose or not message.attempt_ids:
        return conv  # an answer's message never takes a side attempt, nor a side message another purpose's
    return with_attempt(conv, event, message, message_ids, dict(conv.messages))


def purpose_of(conv: ConversationState, message: MessageState) -> str:
    """``answer`` for user messages and answers; a side message's purpose (``compaction``) otherwise."""
    if message.role == "user" or message.user_message_id is not None or not message.attempt_ids:
        return "answer"
    first = conv.attempts.get(message.attempt_ids[0])
    return first.purpose if first is not None else "answer"


def compaction_ids(conv: ConversationState) -> list[str]:
    """The compaction messages of the conversation, in the order they were started."""
    return [m for m in conv.message_ids if purpose_of(conv, conv.messages[m]) == "compaction"]


def chain_key(message_id: str, attempt_id: str | None) -> str:
    """What a later message names as its parent after this chain entry (and what a compaction's ``through`` is)."""
    return attempt_id or message_id


def cut_points(conv: ConversationState, chain: Chain) -> list[int]:
    """The indexes where a chain may be cut: before each user message but the first (turns stay whole)."""
    return [i for i in range(1, len(chain)) if conv.messages[chain[i][0]].role == "user"]


def effective(conv: ConversationState, chain: Chain) -> tuple[int, str, AttemptState] | None:
    """(how many chain entries it covers, its message id, its attempt) of the compaction that applies, or None."""
    index = {chain_key(m, a): i for i, (m, a) in enumerate(chain)}
    best: tuple[int, str, AttemptState] | None = None
    for message_id in compaction_ids(conv):
        message = conv.messages[message_id]
        attempt = conv.attempts.get(message.selected_attempt_id or "")
        at = index.get(message.parent or "")
        if attempt is None or attempt.status != "complete" or not attempt.text or at is None:
            continue
        if best is None or at + 1 >= best[0]:
            best = (at + 1, message_id, attempt)
    return best


def choose_cut(costs: Sequence[int], fixed: int, budget: int) -> int:
    """How many of the oldest turns (costs in order) to summarize: the fewest such that the newest turns kept
    whole plus ``fixed`` fit in ``budget`` (all of them when even the newest alone does not fit); at least one."""
    kept, total = 0, fixed
    for cost in reversed(costs):
        if total + cost > budget or kept == len(costs) - 1:
            break
        total += cost
        kept += 1
    return len(costs) - kept


def summary_request_text(items: Iterable[tuple[str, str]]) -> str:
    """The compaction's one request message: the instructions, then the turns as ``role: text`` lines (each cut
    to ``TRANSCRIPT_CHARS``)."""
    lines = [
        f"{SUMMARY_REQUEST}: keep the facts, decisions, names, numbers and open questions the rest of the "
        "conversation will need, in a few short paragraphs. Do not answer anything in it.",
        "",
    ]
    for role, text in items:
        cut = text if len(text) <= TRANSCRIPT_CHARS else text[:TRANSCRIPT_CHARS] + " […]"
        lines.append(f"{role}: {cut}")
    return "\n".join(lines)
