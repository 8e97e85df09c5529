"""Ids and timestamps, stamped by the engine when it appends (the reducer never makes either).

Guarantees: ids are unique and sort by creation time (a ULID-like 26-character Crockford base32 string after a
short prefix), so exports read in order; ``now_iso()`` is UTC ISO 8601 with milliseconds.
"""

from __future__ import annotations

import os
import threading
import time
from datetime import UTC, datetime

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


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _encode(value: int, length: int) -> str:
    out = []
    for _ in range(length):
        value, rem = divmod(value, 32)
        out.append(_ALPHABET[rem])
    return "".join(reversed(out))
