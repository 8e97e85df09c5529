"""How an event is laid out as a row of the PostgreSQL ``events`` table, and read back.

Guarantees:
- ``from_row(*row of to_row(e))`` equals ``e`` for every event the codec encodes, including text PostgreSQL
  cannot hold in ``jsonb`` (a NUL character, a lone surrogate, a NaN): such a payload is stored as its JSON text
  under the one key ``~json`` and decoded from it.
- The payload is the codec's dict (``ledger.codec``) without the columns that already hold ``conversation_id``,
  ``seq``, ``ts`` and ``kind``; ``attempt_id``, ``message_id`` and ``request_id`` are copied into their own
  columns for the indexes (the payload stays whole); ``epoch`` is the fencing epoch of the attempt's claim the event
  was appended under (``store.postgres.owners``), NULL for an event of no held attempt (not checked).
- ``column_text`` makes any text safe for a plain ``text`` column (the conversation list's title).
"""

from __future__ import annotations

import json
from typing import Any

import psycopg

from ledger.codec import from_dict, to_dict
from ledger.events import AnyEvent

COLUMNS = (
    "conversation_id",
    "seq",
    "kind",
    "attempt_id",
    "message_id",
    "request_id",
    "ts",
    "writer",
    "payload",
    "epoch",
)
SELECT = "SELECT conversation_id, seq, ts, kind, payload FROM events"
RAW = "~json"
Row = tuple[str, int, str, str, dict[str, Any]]


def to_row(event: AnyEvent, writer: str, epoch: int | None = None) -> tuple[object, ...]:
    """The values of ``COLUMNS`` for an event whose seq is assigned; the payload is JSON text."""
    doc = to_dict(event)
    for key in ("conversation_id", "seq", "ts", "kind"):
        del doc[key]
    if column_text(event.ts) != event.ts:
        doc["ts"] = event.ts  # the column cannot hold it exactly: the payload keeps it
    return (
        event.conversation_id,
        event.seq,
        event.KIND,
        _id(doc.get("attempt_id")),
        _id(doc.get("message_id")),
        _id(doc.get("request_id")),
        column_text(event.ts),
        writer,
        payload_text(doc),
        epoch,
    )


def copy_rows(
    conn: psycopg.Connection[tuple[object, ...]], events: list[AnyEvent], writer: str,
    epochs: list[int | None] | None = None,
) -> None:  # fmt: skip
    """Write the events' rows in one ``COPY`` (inside the caller's transaction), each with its epoch."""
    with conn.cursor().copy(f"COPY events ({', '.join(COLUMNS)}) FROM STDIN") as copy:
        for i, event in enumerate(events):
            copy.write_row(to_row(event, writer, epochs[i] if epochs is not None else None))


def payload_text(doc: dict[str, Any]) -> str:
    try:
        text = json.dumps(doc, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        text.encode("utf-8")
        if "\\u0000" not in text:
            return text
    except (ValueError, UnicodeEncodeError):
        pass
    return json.dumps({RAW: json.dumps(doc, ensure_ascii=True, separators=(",", ":"))})


def from_row(conversation_id: str, seq: int, ts: str, kind: str, payload: dict[str, Any]) -> AnyEvent:
    """The event a row holds; raises ``CodecError`` for a payload the codec rejects."""
    if set(payload) == {RAW}:
        payload = json.loads(payload[RAW])
    return from_dict({"ts": ts, **payload, "kind": kind, "seq": seq, "conversation_id": conversation_id})


def column_text(text: str) -> str:
    """Text a ``text`` column accepts: no NUL, no lone surrogate (replaced)."""
    return text.encode("utf-8", "replace").decode("utf-8").replace("\x00", "")


def _id(value: object) -> str | None:
    return column_text(value) if isinstance(value, str) else None
