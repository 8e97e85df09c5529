"""What every blob store offers (``BlobStore``), and the one way a blob is named (``sha256_of``).

Guarantees:
- A blob's name is the lowercase hex sha256 of its bytes, and nothing else (``sha256_of``).
- ``BlobStore`` methods are safe to call from any thread; they may block on I/O (call them off the event loop).
- ``BlobTooLarge`` (a ``StoreError``) is raised by ``put`` when a back end cannot hold the bytes; its message
  names the size and the limit.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Protocol

from ledger.errors import StoreError

__all__ = ["BlobStore", "BlobTooLarge", "sha256_of"]


class BlobTooLarge(StoreError):
    """The bytes are larger than this back end holds."""


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class BlobStore(Protocol):
    def put(self, data: bytes, media_type: str = "application/octet-stream") -> str:
        """Store ``data`` (once, by content) and return its sha256 (hex)."""

    def get(self, sha256: str) -> bytes | None:
        """The bytes stored under ``sha256``, or None."""

    def has(self, sha256: str) -> bool: ...

    def delete(self, hashes: Iterable[str]) -> int:
        """Remove these blobs; how many were there."""
