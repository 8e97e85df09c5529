"""Which blobs a deleted conversation leaves behind that nothing else references (they are then deleted).

Guarantees: ``referenced_by(conv)`` (and ``named_by(events)``, for a ledger read back) is every sha256 a
conversation's ledger names (its messages' attachments, those of messages still queued included, its tool
results' binary parts, the whole texts of messages and results over ``ledger.bounds.TEXT_BOUND``);
``unreferenced(store, gone, candidates)`` reads every other live conversation
(``events(..., keep=False)``: nothing stays in memory) and returns the candidates none of them names. A deleted
conversation references nothing (it cannot be opened again), branches are conversations of their own: a blob a
branch shares stays. Blocking (reads the store): call it on a worker thread; it costs a pass over the other
conversations' events only when the deleted one named any blob.
"""

from __future__ import annotations

from collections.abc import Iterable

from ledger.events import AnyEvent, MessageQueued, Submitted, ToolResult
from ledger.state import ConversationState
from store.api import EventStore


def referenced_by(conv: ConversationState) -> set[str]:
    found = {a.sha256 for m in conv.messages.values() for a in m.attachments}
    found.update(m.whole.sha256 for m in conv.messages.values() if m.whole is not None)
    found.update(a.sha256 for queued in conv.queue for a in queued.attachments)
    for attempt in conv.attempts.values():
        for call in attempt.tool_calls.values():
            found.update(p.sha256 for p in call.parts if p.sha256)
            if call.whole is not None:
                found.add(call.whole.sha256)
    return found


def named_by(events: Iterable[AnyEvent]) -> list[str]:
    """Every sha256 these events name, once each, in the order first named (exports: ``files/<sha256>``)."""
    found: dict[str, None] = {}
    for event in events:
        if isinstance(event, Submitted | MessageQueued):  # a queued message's files wait in the store too
            found.update((a.sha256, None) for a in event.attachments)
        elif isinstance(event, ToolResult):
            found.update((p.sha256, None) for p in event.parts if p.sha256)
        if isinstance(event, Submitted | ToolResult) and event.whole is not None:
            found[event.whole.sha256] = None
    return list(found)


def unreferenced(store: EventStore, gone: str, candidates: set[str]) -> set[str]:
    left = set(candidates)
    for cid in store.conversation_ids():
        if not left:
            break
        if cid == gone or store.is_deleted(cid):
            continue
        left.difference_update(named_by(store.events(cid, keep=False)))
    return left
