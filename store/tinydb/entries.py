"""The entries of the TinyDB index: a live conversation's (its file and summary) and a deleted one's tombstone, which
keeps its ``deleted`` event (what the conversation spent, ``Deleted.usage``), since its file is removed.

Guarantees: ``index_docs`` is the index's content, a tombstone already written kept as it was; ``tombstone`` is
the index entry of a deleted conversation (``event`` holds its ``deleted`` event in the
codec's form, when known); ``graves_of`` reads those events back from the index's entries: an entry without one (an
index written before it was kept) has none, and one that cannot be decoded is reported with a readable line and left
out (the tombstone itself stays: the conversation stays deleted).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ledger.codec import from_dict, to_dict
from ledger.errors import CodecError
from ledger.events import Deleted
from ledger.summary import ConversationSummary, as_doc

INDEX_TABLE = "conversations"


def index_docs(
    summaries: dict[str, ConversationSummary], deleted: set[str], old: dict[str, Any] | None = None,
    graves: dict[str, Deleted] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """The index file's content: one entry per live conversation (with its summary), then the tombstones (a new one
    with its ``deleted`` event under ``event``, when ``graves`` has it; an old one as it was)."""
    tombstones = {
        str(doc["id"]): doc for doc in (old or {}).get(INDEX_TABLE, {}).values() if str(doc.get("id")) in deleted
    }
    entries = [{"id": cid, "file": f"conv-{cid}.json", "deleted": False, **as_doc(s)} for cid, s in summaries.items()]
    entries += [tombstones.get(cid) or tombstone(cid, (graves or {}).get(cid)) for cid in sorted(deleted)]
    return {INDEX_TABLE: {str(n): doc for n, doc in enumerate(entries, start=1)}}


def tombstone(cid: str, event: Deleted | None) -> dict[str, Any]:
    doc: dict[str, Any] = {"id": cid, "file": None, "deleted": True}
    return doc if event is None else {**doc, "event": to_dict(event)}


def graves_of(table: dict[str, Any], report: Callable[[str, str], object]) -> dict[str, Deleted]:
    """The ``deleted`` event each tombstone of the index keeps; one that cannot be read is reported and left out."""
    graves: dict[str, Deleted] = {}
    for doc in table.values():
        if not doc.get("deleted") or "event" not in doc:
            continue
        cid = str(doc["id"])
        try:
            event = from_dict({**doc["event"], "conversation_id": cid})
        except (CodecError, TypeError) as exc:
            report(f"grave:{cid}", f"Conversation {cid} (deleted): what it spent could not be read ({exc}).")
            continue
        if isinstance(event, Deleted):
            graves[cid] = event
    return graves
