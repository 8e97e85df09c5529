"""A turn as an editor sees it: one pure function from the ledger's events of a turn (and what was already sent)
to the Agent Client Protocol ``session/update``s still to send.

Guarantees: pure (no clock, no I/O, nothing kept between calls). ``project(attempt_id, events, sent)`` folds
``events[sent.seen:]`` into ``sent.state`` with the ledger's own reducer (``ledger.reducer.reduce``) and, after
each event, sends what that event changed in the attempt, in ledger order:
- text the reducer rendered → one ``agent_message_chunk``; reasoning → one ``agent_thought_chunk`` (a chunk the
  stale rule drops, or one recorded after the end, sends nothing);
- a tool call the first time the state has it → ``tool_call`` (pending, its arguments once complete); then each
  change of it → one ``tool_call_update``: its arguments completed, dispatched (``in_progress``), progress
  (``in_progress``, the progress as its content), its one result (``completed`` for ``ok``, else ``failed``, with
  the tool's content).
So nothing is sent twice, the updates of a turn's events split at any point equal those of the events at once, and
the concatenated ``agent_message_chunk`` texts are the attempt's text in the state: the text the ledger persists,
the interrupted prefix of a stopped answer included.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NamedTuple

from acp.helpers import (
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
)
from acp.schema import AgentMessageChunk, AgentThoughtChunk, ToolCallProgress, ToolCallStart, ToolCallStatus

from ledger.events import AnyEvent
from ledger.reducer import reduce
from ledger.state import AttemptState, State, ToolCallState

Update = AgentMessageChunk | AgentThoughtChunk | ToolCallStart | ToolCallProgress


class Sent(NamedTuple):
    """What the editor was told of a turn: the state after the first ``seen`` events of it."""

    state: State
    seen: int = 0


def project(attempt_id: str, events: Sequence[AnyEvent], sent: Sent) -> tuple[tuple[Update, ...], Sent]:
    """The updates ``events[sent.seen:]`` add to attempt ``attempt_id``, and what has been sent after them."""
    state, updates = sent.state, []
    for event in events[sent.seen :]:
        before = _attempt(state, event.conversation_id, attempt_id)
        state = reduce(state, event)
        after = _attempt(state, event.conversation_id, attempt_id)
        if after is not None:
            updates += changes(before, after)
    return tuple(updates), Sent(state, max(len(events), sent.seen))


def changes(before: AttemptState | None, after: AttemptState) -> list[Update]:
    """What differs between two states of one attempt, as updates (text, reasoning, then tool calls)."""
    out: list[Update] = []
    start = before.text_pieces.length if before is not None else 0
    if after.text_pieces.length > start:
        out.append(update_agent_message_text(after.text_pieces.tail(start)))
    start = before.reasoning_pieces.length if before is not None else 0
    if after.reasoning_pieces.length > start:
        out.append(update_agent_thought_text(after.reasoning_pieces.tail(start)))
    old_calls = before.tool_calls if before is not None else {}
    for call_id, call in after.tool_calls.items():
        old = old_calls.get(call_id)
        if old is None:
            out.append(announced(call))
        elif old != call and (update := changed(old, call)) is not None:
            out.append(update)
    return out


def status_of(call: ToolCallState) -> ToolCallStatus:
    """A tool call's status in ACP words: its result's (``ok`` completed, anything else failed), else its phase."""
    if call.answered:
        return "completed" if call.status == "ok" else "failed"
    return "in_progress" if call.phase == "running" else "pending"


def announced(call: ToolCallState) -> ToolCallStart:
    """The ``tool_call`` that first shows a call, with all the state has of it."""
    return start_tool_call(
        call.call_id,
        call.name,
        kind="other",
        status=status_of(call),
        content=_content(call),
        raw_input=_arguments(call) if call.phase != "streaming" else None,
    )


def changed(old: ToolCallState, call: ToolCallState) -> ToolCallProgress | None:
    """The ``tool_call_update`` for what changed in a call (None: nothing the editor shows)."""
    fields: dict[str, Any] = {}
    if old.phase == "streaming" and call.phase != "streaming":
        fields["raw_input"] = _arguments(call)
    if status_of(old) != status_of(call):
        fields["status"] = status_of(call)
    if (old.answered, old.progress, old.progress_message) != (call.answered, call.progress, call.progress_message):
        fields["content"] = _content(call)
    return update_tool_call(call.call_id, **fields) if fields else None


def _content(call: ToolCallState) -> list[Any] | None:
    if call.answered:
        return [tool_content(text_block(call.content))]
    if call.progress is not None:
        total = f"/{call.total:g}" if call.total is not None else ""
        said = f" {call.progress_message}" if call.progress_message else ""
        return [tool_content(text_block(f"{call.progress:g}{total}{said}"))]
    return None


def _arguments(call: ToolCallState) -> Any:
    try:
        return json.loads(call.arguments) if call.arguments else {}
    except ValueError:
        return call.arguments


def _attempt(state: State, cid: str, attempt_id: str) -> AttemptState | None:
    conv = state.conversations.get(cid)
    return conv.attempts.get(attempt_id) if conv is not None else None
