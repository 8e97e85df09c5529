"""Rendered HTML kept by the hash of its text, whatever the text's size: a chat opened again is not rendered again.

Guarantees:
- ``put(text, html)`` keeps ``html`` under the text's BLAKE2b digest (16 bytes, so a long text costs its digest, not
  itself, as a key); ``get(text)`` gives it back for the same text (None if it was never kept or was dropped).
- The cache is bounded in bytes (the HTML kept plus a small overhead per entry): past ``limit`` the least recently
  used entries are dropped first. An HTML larger than a quarter of the limit is returned but not kept.
- Safe from several threads at once (renders run in worker threads): the lock is held only to look up and store,
  never while rendering (two threads may render the same text once each, never wait on each other).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from hashlib import blake2b

ENTRY = 120  # bytes an entry costs besides its HTML (key, node, string header), roughly


def digest(text: str) -> bytes:
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class RenderCache:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self.hits = 0
        self._entries: OrderedDict[bytes, str] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, text: str) -> str | None:
        """The HTML kept for ``text``, or None."""
        key = digest(text)
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                self.hits += 1
            return found

    def put(self, text: str, html: str) -> None:
        """Keep ``html`` for ``text`` (not if it alone is over a quarter of the limit)."""
        cost = len(html) + ENTRY
        if cost > self.limit // 4:
            return
        key = digest(text)
        with self._lock:
            if key not in self._entries:
                self._entries[key] = html
                self.size += cost
            while self.size > self.limit and self._entries:
                _, dropped = self._entries.popitem(last=False)
                self.size -= len(dropped) + ENTRY

    def __contains__(self, text: str) -> bool:
        with self._lock:
            return digest(text) in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.size = 0
