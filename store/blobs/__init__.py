"""Blob stores: file bytes by content (sha256), for the attachments of user messages and the binary parts of tool
results. The ledger holds only the hash (``ledger.events.values.Attachment``, ``ledger.events.values.ToolPart``).

Guarantees (every back end, see ``store.blobs.api.BlobStore``):
- ``put`` stores bytes once under the sha256 of exactly those bytes and returns it (hex); putting the same bytes
  again stores nothing new.
- ``get`` returns exactly the bytes put, or None for a hash never put (or deleted).
- ``delete`` removes the blobs named and says how many it removed; nothing else is touched.
"""

from __future__ import annotations

from store.blobs.api import BlobStore, BlobTooLarge, sha256_of
from store.blobs.folder import FolderBlobs
from store.blobs.memory import MemoryBlobs
from store.blobs.postgres import PgBlobs

__all__ = ["BlobStore", "BlobTooLarge", "FolderBlobs", "MemoryBlobs", "PgBlobs", "sha256_of"]
