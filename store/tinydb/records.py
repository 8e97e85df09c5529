"""The records of a conversation's log (``conv-<id>.log``): framed, checksummed, and read back up to the first damage.

Guarantees:
- A log starts with ``MAGIC`` (8 bytes: the format and its version); each record after it is one written batch:
  ``<u32 length><u32 crc32 of the payload><payload>`` (little-endian), the payload the compact JSON
  (``store.tinydb.storage.dumps``) of the batch's documents as an array. ``record(docs)`` makes one; it is
  written with one ``write`` and made durable with one ``fdatasync`` (``store.tinydb.logfile``).
- ``scan(data, after)`` never raises. It returns every document of the records before the first damage, in
  order, the byte offset where that damage starts (``end``: the log's good part is ``data[:end]``) and a readable
  line naming it: a record cut short (a write torn by a crash: its length says more than is there), a checksum
  that does not match (crc32 finds every error within 32 bits in a row: a flipped bit or byte of the payload,
  always), a payload that is not an array of objects, a missing or
  foreign header. A record is a batch: whole or not at all, never half of one.
- Records whose every event has a seq up to ``after`` (the last seq of the compacted file) are skipped, not
  reported: a compaction that renamed its new file but died before removing the log leaves them behind, and
  that file already holds them.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field
from typing import Any

from store.tinydb.documents import last_seq
from store.tinydb.storage import dumps, loads

MAGIC = b"LCLOG01\n"
HEADER = struct.Struct("<II")
#: A record longer than this is damage, not a batch (a batch is what 250 ms of appends produce, texts bounded).
MAX_RECORD = 1 << 30


def record(docs: list[dict[str, Any]]) -> bytes:
    """One record holding ``docs``: length, checksum, payload."""
    payload = dumps(docs)
    return HEADER.pack(len(payload), zlib.crc32(payload)) + payload


@dataclass
class Scan:
    """What a log holds: the documents of its good records, where the good part ends, what stopped the reading."""

    docs: list[dict[str, Any]] = field(default_factory=list)
    records: int = 0
    end: int = 0
    size: int = 0
    problem: str | None = None

    @property
    def damaged(self) -> bool:
        return self.problem is not None


def scan(data: bytes, after: int = 0) -> Scan:
    """The documents of ``data`` (a whole log) up to its first damage; see the module's guarantees."""
    found = Scan(size=len(data))
    if not data:
        return found
    if data[: len(MAGIC)] != MAGIC:
        found.problem = "it does not start as a log written by this program"
        return found
    view = memoryview(data)
    pos = found.end = len(MAGIC)
    while pos < len(data):
        if len(data) - pos < HEADER.size:
            found.problem = f"its last record is cut short ({len(data) - pos} byte(s) of a header)"
            break
        length, crc = HEADER.unpack_from(data, pos)
        start = pos + HEADER.size
        if length > MAX_RECORD:
            found.problem = f"record {found.records + 1} has a length no batch has ({length:,} bytes)"
            break
        if start + length > len(data):
            found.problem = f"its last record is cut short ({len(data) - start:,} of {length:,} bytes)"
            break
        payload = view[start : start + length]
        if zlib.crc32(payload) != crc:
            found.problem = f"record {found.records + 1} does not match its checksum"
            break
        docs = _documents(payload)
        if docs is None:
            found.problem = f"record {found.records + 1} is not a list of stored records"
            break
        if not (docs and last_seq(docs) <= after):
            found.docs += docs
        found.records += 1
        pos = found.end = start + length
    return found


def _documents(payload: memoryview) -> list[dict[str, Any]] | None:
    try:
        docs = loads(bytes(payload))
    except (ValueError, RecursionError):
        return None
    if not isinstance(docs, list) or not all(isinstance(doc, dict) for doc in docs):
        return None
    return docs
