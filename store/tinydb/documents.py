"""How events are laid out as TinyDB documents in a conversation file.

Guarantees:
- ``from_documents(to_documents(events))`` gives the same events back, in the same order.
- A run of consecutive chunk events of one attempt and request is stored as one ``chunk_batch`` document with
  one short row per chunk (about 5x smaller than a document per chunk); every other event is one document,
  the codec's dict without the conversation id (the file already names it).
- In memory a batch's rows are a tuple of tuples of atomic values (``untracked_rows`` makes those read from a file
  so too): the garbage collector stops walking them after one young collection, however long the cached file
  grows (issue 11).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ledger.codec import from_dict, to_dict
from ledger.errors import CodecError
from ledger.events import AnyEvent, Chunk

BATCH_KIND = "chunk_batch"


def to_documents(events: Sequence[AnyEvent]) -> list[dict[str, Any]]:
    """Documents for events of one conversation, chunk runs grouped."""
    docs: list[dict[str, Any]] = []
    batch: dict[str, Any] | None = None
    for event in events:
        if isinstance(event, Chunk):
            if batch is None or batch["attempt_id"] != event.attempt_id or batch["request_id"] != event.request_id:
                batch = {"kind": BATCH_KIND, "attempt_id": event.attempt_id, "request_id": event.request_id, "rows": []}
                docs.append(batch)
            row: tuple[Any, ...] = (event.seq, event.ts, event.chunk_seq, event.text)
            batch["rows"].append(row if event.block == "text" else (*row, event.block))
            continue
        batch = None
        doc = to_dict(event)
        del doc["conversation_id"]
        docs.append(doc)
    for doc in docs:
        if doc.get("kind") == BATCH_KIND:
            doc["rows"] = tuple(doc["rows"])
    return docs


def last_seq(docs: Sequence[dict[str, Any]]) -> int:
    """The seq of the last event in stored documents (0 when none can be told): a batch's is its last row's."""
    for doc in reversed(docs):
        rows = doc.get("rows") if doc.get("kind") == BATCH_KIND else None
        seq = rows[-1][0] if rows and isinstance(rows[-1], list | tuple) and rows[-1] else doc.get("seq")
        if isinstance(seq, int):
            return seq
    return 0


def untracked_rows(docs: Iterable[dict[str, Any]]) -> None:
    """Turn the rows of chunk batches read from a file (JSON arrays: lists) into tuples of tuples, in place."""
    for doc in docs:
        if isinstance(doc, dict) and doc.get("kind") == BATCH_KIND and isinstance(doc.get("rows"), list):
            doc["rows"] = tuple(tuple(row) if isinstance(row, list) else row for row in doc["rows"])


def from_documents(conversation_id: str, docs: Iterable[dict[str, Any]]) -> tuple[list[AnyEvent], list[str]]:
    """Events from stored documents, and a readable line for each document that could not be decoded."""
    events: list[AnyEvent] = []
    problems: list[str] = []
    for number, doc in enumerate(docs, start=1):
        try:
            if isinstance(doc, dict) and doc.get("kind") == BATCH_KIND:
                events.extend(_expand(conversation_id, doc))
            else:
                events.append(from_dict({**doc, "conversation_id": conversation_id}))
        except (CodecError, TypeError, ValueError, KeyError) as exc:
            problems.append(f"document {number} skipped: {exc}")
    return events, problems


def _expand(conversation_id: str, doc: dict[str, Any]) -> list[AnyEvent]:
    out: list[AnyEvent] = []
    for row in doc["rows"]:
        seq, ts, chunk_seq, text, *rest = row
        out.append(
            from_dict(
                {
                    "kind": "chunk",
                    "seq": seq,
                    "ts": ts,
                    "conversation_id": conversation_id,
                    "attempt_id": doc["attempt_id"],
                    "request_id": doc["request_id"],
                    "chunk_seq": chunk_seq,
                    "text": text,
                    "block": rest[0] if rest else "text",
                }
            )
        )
    return out
