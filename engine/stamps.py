"""Ids and timestamps, stamped by the engine when it appends (the reducer never makes either).

Guarantees: ids are unique and sort by creation time (a ULID-like 26-character Crockford base32 string after a
short prefix), so exports read in order; ``now_iso()`` is UTC ISO 8601 with milliseconds. ``AttemptIds`` is the
one place the two ids every event of an attempt carries are named: ``Chunk(**ids, ...)`` (checked by mypy).
"""

from __future__ import annotations

import os
import threading
import time
from datetime import UTC, datetime
from typing import TypedDict

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_lock = threading.Lock()
_last = (0, 0)


def new_id(prefix: str) -> str:
    """``prefix_`` + 10 chars of milliseconds + 16 chars of randomness, monotonic within a millisecond."""
    global _last
    with _lock:
        ms = time.time_ns() // 1_000_000
        rand = int.from_bytes(os.urandom(10), "big")
        if ms <= _last[0]:
            ms, rand = _last[0], _last[1] + 1
        _last = (ms, rand)
    return f"{prefix}_{_encode(ms, 10)}{_encode(rand, 16)}"


class AttemptIds(TypedDict):
    """The ids every event of one attempt carries (spread into the event: ``Chunk(**ids, chunk_seq=...)``)."""

    conversation_id: str
    attempt_id: str


def attempt_ids(conversation_id: str, attempt_id: str) -> AttemptIds:
    return {"conversation_id": conversation_id, "attempt_id": attempt_id}


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _encode(value: int, length: int) -> str:
    out = []
    for _ in range(length):
        value, rem = divmod(value, 32)
        out.append(_ALPHABET[rem])
    return "".join(reversed(out))
