"""Blobs held in memory: the back end of tests and of a store that keeps nothing on disk.

Guarantees: as ``store.blobs.api.BlobStore``; one lock guards the dict, so any thread may call it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from store.blobs.api import sha256_of


class MemoryBlobs:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._blobs: dict[str, bytes] = {}

    def put(self, data: bytes, media_type: str = "application/octet-stream") -> str:
        digest = sha256_of(data)
        with self._lock:
            self._blobs.setdefault(digest, bytes(data))
        return digest

    def get(self, sha256: str) -> bytes | None:
        with self._lock:
            return self._blobs.get(sha256)

    def has(self, sha256: str) -> bool:
        with self._lock:
            return sha256 in self._blobs

    def delete(self, hashes: Iterable[str]) -> int:
        with self._lock:
            return sum(self._blobs.pop(h, None) is not None for h in set(hashes))
