"""Model history: the messages the next request sends, projected from the state (docs/ledger.md, model history).

Guarantees, per turn in order, along one branch of the message tree (``ledger.tree``):
- the user message is always sent;
- the assistant message contributes its *selected* attempt when that attempt completed, or was interrupted by a
  partial-keeping cancel (user, navigation, disconnect, shutdown, restart): for each step, the text that was
  rendered, and when the step's tool calls were answered, one assistant message with those calls followed by
  **exactly one tool message per tool_call_id**; tool calls without a result (a step stopped while the model was
  still writing them) are omitted, never invented;
- an empty interruption, a failed attempt, a discarded one (delete) or one still streaming contributes nothing;
- a continuation (Continue, ``ledger.continuation``) contributes the answer it continues joined with its own text:
  the prefix once, the texts at the join one assistant message;
- reasoning blocks are never sent back (they are shown to the user only);
- a tool result longer than ``tool_result_chars`` is cut, with a note saying so (the ledger keeps all of it); one
  over ``ledger.bounds.TEXT_BOUND`` sends at most its preview, the note counting from its whole length; a user
  message over it sends its preview with such a note;
- after a compaction that applies to the branch (``ledger.compaction.effective``): one ``system`` entry with its
  summary (``SUMMARY_PREFIX``) in place of the turns it covers, then the turns after it, whole, as above. Whoever
  adds instructions puts them before everything (``instructions, then the summary, then the recent turns``);
- the history of a compaction's own message is its request: one user message with the turns it summarizes (the
  history its branch had up to its ``through``, an earlier summary included) as a transcript;
- the history of a title's own message is its request (``ledger.titles.title_request``); a title is never part of
  any other history (it hangs outside the message tree, like a compaction).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from ledger.compaction import SUMMARY_PREFIX, Chain, effective, purpose_of, summary_request_text
from ledger.continuation import joined, links
from ledger.events import Attachment, ToolPart
from ledger.state import AttemptState, ConversationState, ToolCallState
from ledger.titles import title_request
from ledger.tree import chain_before, selected_path

TOOL_RESULT_CHARS = 20_000


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallRef:
    call_id: str
    name: str
    arguments: str


@dataclass(frozen=True, kw_only=True, slots=True)
class HistoryEntry:
    role: Literal["system", "user", "assistant", "tool"]
    content: str | None
    message_id: str
    attempt_id: str | None = None
    tool_calls: tuple[ToolCallRef, ...] = ()
    tool_call_id: str | None = None
    attachments: tuple[Attachment, ...] = ()  # a user entry's files (the engine sends their bytes as parts)
    parts: tuple[ToolPart, ...] = ()  # a tool entry's whole result (the engine sends what the provider takes)
    structured: str | None = None  # a tool entry's structuredContent (JSON text)

    def as_message(self) -> dict[str, Any]:
        if self.role == "tool":
            return {"role": "tool", "tool_call_id": self.tool_call_id, "content": self.content or ""}
        if self.role == "system":
            return {"role": "system", "content": self.content or ""}
        message: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.call_id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        return message


def model_history(
    conv: ConversationState, *, until_message_id: str | None = None, tool_result_chars: int = TOOL_RESULT_CHARS
) -> tuple[HistoryEntry, ...]:
    """The history for the next request after the shown path's tip; with ``until_message_id``, what came before
    that message along its own branch (the attempts its ancestors followed)."""
    if until_message_id is None:
        chain = [(m, conv.messages[m].selected_attempt_id) for m in selected_path(conv)]
    else:
        chain = chain_before(conv, until_message_id)
        purpose = purpose_of(conv, conv.messages[until_message_id])
        if purpose == "compaction":
            return summary_request(until_message_id, chain_history(conv, chain, tool_result_chars))
        if purpose == "title":  # its own request (ledger.titles), never the chat's history
            system, user = title_request(conv, chain)
            return HistoryEntry(role="system", content=system, message_id=until_message_id), HistoryEntry(
                role="user", content=user, message_id=until_message_id
            )
    return chain_history(conv, chain, tool_result_chars)


def chain_history(
    conv: ConversationState, chain: Chain, tool_result_chars: int = TOOL_RESULT_CHARS, *, compacted: bool = True
) -> tuple[HistoryEntry, ...]:
    """The history of a chain of (message, attempt) pairs, after the compaction that applies to it (if any;
    ``compacted`` False: none, each turn as it is)."""
    entries: list[HistoryEntry] = []
    applies = effective(conv, chain) if compacted else None
    if applies is not None:
        covered, summary_id, summary = applies
        chain = chain[covered:]
        text = f"{SUMMARY_PREFIX}\n\n{summary.text}"
        entries.append(HistoryEntry(role="system", content=text, message_id=summary_id))
    for message_id, attempt_id in chain:
        message = conv.messages[message_id]
        if message.role == "user":
            text = message.text if message.whole is None else _noted(message.text, message.whole.chars, "message")
            entries.append(
                HistoryEntry(role="user", content=text, message_id=message_id, attachments=message.attachments)
            )
            continue
        attempt = conv.attempts.get(attempt_id) if attempt_id else None
        if attempt is not None:
            entries += answer_entries(conv, attempt, tool_result_chars)
    return tuple(entries)


def answer_entries(
    conv: ConversationState, attempt: AttemptState, tool_result_chars: int = TOOL_RESULT_CHARS
) -> list[HistoryEntry]:
    """What an answer contributes with ``attempt`` selected: the entries of each contributing link of its answer
    (``ledger.continuation``: just ``attempt`` unless it is a continuation), the texts at each join one message."""
    entries: list[HistoryEntry] = []
    for link in links(conv, attempt) if not attempt.is_live else ():
        more = attempt_entries(link, tool_result_chars) if link.in_history else []
        if entries and more and entries[-1].role == "assistant" and not entries[-1].tool_calls:
            text = joined(entries[-1].content or "", more[0].content or "")
            more[0] = replace(more[0], content=text or None)
            entries.pop()
        entries += more
    return entries


def attempt_entries(attempt: AttemptState, tool_result_chars: int = TOOL_RESULT_CHARS) -> list[HistoryEntry]:
    """What one attempt contributes: per step its text, and its answered tool calls with their results."""
    entries: list[HistoryEntry] = []
    mid, aid = attempt.message_id, attempt.attempt_id
    for index in range(max(len(attempt.steps), 1)):
        text = attempt.step_text(index)
        calls = [c for c in attempt.step_calls(index) if c.answered]
        if calls:
            refs = tuple(ToolCallRef(call_id=c.call_id, name=c.name, arguments=c.arguments) for c in calls)
            entries.append(
                HistoryEntry(role="assistant", content=text or None, tool_calls=refs, message_id=mid, attempt_id=aid)
            )
            entries += [
                HistoryEntry(
                    role="tool",
                    content=_capped(c, tool_result_chars),
                    tool_call_id=c.call_id,
                    message_id=mid,
                    attempt_id=aid,
                    parts=c.parts,
                    structured=c.structured,
                )
                for c in calls
            ]
        elif text:
            entries.append(HistoryEntry(role="assistant", content=text, message_id=mid, attempt_id=aid))
    return entries


def summary_request(message_id: str, history: tuple[HistoryEntry, ...]) -> tuple[HistoryEntry, ...]:
    """A compaction's request: the history it summarizes as one user message (files named, tool calls as lines)."""
    items: list[tuple[str, str]] = []
    for entry in history:
        text = entry.content or ""
        if entry.attachments:
            text += " [files: " + ", ".join(a.name for a in entry.attachments) + "]"
        for call in entry.tool_calls:
            text += f" [calls {call.name}({call.arguments})]"
        items.append((entry.role, text.strip()))
    return (HistoryEntry(role="user", content=summary_request_text(items), message_id=message_id),)


def as_messages(entries: tuple[HistoryEntry, ...]) -> list[dict[str, Any]]:
    """The OpenAI-style message list for a request."""
    return [entry.as_message() for entry in entries]


def _capped(call: ToolCallState, limit: int) -> str:
    content = call.content
    if len(content) <= limit and call.whole is None:
        return content
    return _noted(content[:limit], call.whole.chars if call.whole is not None else len(content), "result")


def _noted(shown: str, chars: int, what: str) -> str:
    return f"{shown}\n[… {chars - len(shown):,} more characters cut; the full {what} is in the ledger]"
