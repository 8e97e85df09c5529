"""Which blobs a deleted conversation leaves behind that nothing else references (they are then deleted).

Guarantees: ``referenced_by(conv)`` is every sha256 a conversation's ledger names (its messages' attachments, its
tool results' binary parts); ``unreferenced(store, gone, candidates)`` reads every other live conversation
(``events(..., keep=False)``: nothing stays in memory) and returns the candidates none of them names. A deleted
conversation references nothing (it cannot be opened again), branches are conversations of their own: a blob a
branch shares stays. Blocking (reads the store): call it on a worker thread; it costs a pass over the other
conversations' events only when the deleted one named any blob.
"""

from __future__ import annotations

from ledger.events import Submitted, ToolResult
from ledger.state import ConversationState
from store.api import EventStore


def referenced_by(conv: ConversationState) -> set[str]:
    found = {a.sha256 for m in conv.messages.values() for a in m.attachments}
    for attempt in conv.attempts.values():
        for call in attempt.tool_calls.values():
            found.update(p.sha256 for p in call.parts if p.sha256)
    return found


def unreferenced(store: EventStore, gone: str, candidates: set[str]) -> set[str]:
    left = set(candidates)
    for cid in store.conversation_ids():
        if not left:
            break
        if cid == gone or store.is_deleted(cid):
            continue
        for event in store.events(cid, keep=False):
            if isinstance(event, Submitted):
                left.difference_update(a.sha256 for a in event.attachments)
            elif isinstance(event, ToolResult):
                left.difference_update(p.sha256 for p in event.parts if p.sha256)
    return left
