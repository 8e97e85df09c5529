"""What a share link shows: the conversation replayed up to its snapshot's event, along the path its owner saw
then, minus what the sharer did not tick (docs/users.md, "Share links").

Guarantees (pure; no clock, no I/O):
- ``at_snapshot(events, at_seq)`` is the conversation replayed from its events with ``seq <= at_seq`` only: an
  event after the snapshot never reaches the view, whatever it is (a later message, a Retry, a rename, a delete).
- ``share_view(conv, tools=..., attachments=...)`` is the path the page showed (``ledger.tree.selected_path``: the
  chosen versions and selected attempts), each user message with its text, each answer with every one of its
  attempts in order (the one shown then marked), each attempt with its status, why it stopped or failed, and per
  step its text (a continued answer: the texts it continues first, as the page shows them, ``ledger.continuation``)
  and tool calls. Reasoning is never shown (as in an export). A title-making attempt is not part of a chat.
- Tool calls always show their name and status; their arguments and results only when ``tools``. A user message's
  files show only when ``attachments`` (else the view holds how many there were, nothing of them).
- ``view_of(events, at_seq, ...)`` is both: what ``/s/<token>`` renders (``ui.share_page``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from ledger.continuation import joined, links
from ledger.events import AnyEvent, Attachment
from ledger.reducer import replay
from ledger.state import AttemptState, ConversationState, ToolCallState
from ledger.tree import selected_path

__all__ = ["SharedAttempt", "SharedCall", "SharedMessage", "SharedView", "at_snapshot", "share_view", "view_of"]


class SharedCall(NamedTuple):
    name: str
    status: str  # a ``ToolStatus`` or "" (no result at the snapshot)
    arguments: str | None = None  # only when tool details are shared
    result: str | None = None


class SharedAttempt(NamedTuple):
    attempt_id: str
    model: str
    status: str  # streaming | closing | complete | interrupted | failed | empty
    steps: tuple[tuple[str, tuple[SharedCall, ...]], ...]
    cancel_source: str | None = None
    error_summary: str | None = None
    finish_reason: str | None = None
    purpose: str = "answer"


class SharedMessage(NamedTuple):
    message_id: str
    role: str  # "user" | "assistant"
    text: str = ""
    files: tuple[Attachment, ...] = ()  # only when attachments are shared
    files_left_out: int = 0
    attempts: tuple[SharedAttempt, ...] = ()
    shown: int = 0  # the index in ``attempts`` of the attempt the page showed


class SharedView(NamedTuple):
    title: str
    at_seq: int
    at_ts: str  # when the snapshot's last event happened
    messages: tuple[SharedMessage, ...]


def at_snapshot(events: Iterable[AnyEvent], at_seq: int) -> ConversationState | None:
    """The conversation as its events up to ``at_seq`` make it (None: none of it yet, or deleted by then)."""
    state = replay(e for e in events if e.seq <= at_seq)
    convs = list(state.conversations.values())
    return convs[0] if convs and not convs[0].deleted else None


def share_view(conv: ConversationState, *, tools: bool, attachments: bool, at_ts: str = "") -> SharedView:
    """The page's content (see the module's guarantees)."""
    messages: list[SharedMessage] = []
    for message_id in selected_path(conv):
        message = conv.messages[message_id]
        if message.role == "user":
            files = message.attachments
            messages.append(
                SharedMessage(
                    message_id,
                    "user",
                    text=message.text,
                    files=files if attachments else (),
                    files_left_out=0 if attachments else len(files),
                )
            )
            continue
        attempts = [conv.attempts[a] for a in message.attempt_ids if a in conv.attempts]
        attempts = [a for a in attempts if a.purpose != "title"]
        if not attempts:
            continue
        ids = [a.attempt_id for a in attempts]
        shown = ids.index(message.selected_attempt_id) if message.selected_attempt_id in ids else len(ids) - 1
        shared = tuple(_attempt(conv, a, tools) for a in attempts)
        messages.append(SharedMessage(message_id, "assistant", attempts=shared, shown=shown))
    return SharedView(conv.title, conv.last_seq, at_ts or conv.updated_ts, tuple(messages))


def view_of(events: Iterable[AnyEvent], at_seq: int, *, tools: bool, attachments: bool) -> SharedView | None:
    """``share_view`` of ``at_snapshot``: what the link shows (None when nothing of the chat existed then)."""
    kept = [e for e in events if e.seq <= at_seq]
    conv = at_snapshot(kept, at_seq)
    if conv is None:
        return None
    at_ts = max((e.ts for e in kept), default="")
    return share_view(conv, tools=tools, attachments=attachments, at_ts=at_ts)


def _attempt(conv: ConversationState, attempt: AttemptState, tools: bool) -> SharedAttempt:
    steps: list[tuple[str, tuple[SharedCall, ...]]] = []
    for link in links(conv, attempt):  # a continued answer: the texts it continues first, as the page shows
        if link is not attempt and not link.in_history:
            continue
        more = [
            (link.step_text(i), tuple(_call(c, tools) for c in link.step_calls(i)))
            for i in range(max(len(link.steps), 1))
        ]
        if steps and not steps[-1][1]:  # the join: one text, however many continuations made it
            more[0] = (joined(steps.pop()[0], more[0][0]), more[0][1])
        steps += more
    return SharedAttempt(
        attempt_id=attempt.attempt_id,
        model=attempt.model,
        status=attempt.status,
        steps=tuple(steps),
        cancel_source=attempt.cancel_source,
        error_summary=attempt.error_summary,
        finish_reason=attempt.finish_reason,
        purpose=attempt.purpose,
    )


def _call(call: ToolCallState, tools: bool) -> SharedCall:
    status = call.status or ""
    return SharedCall(call.name, status, call.arguments if tools else None, call.content if tools else None)
