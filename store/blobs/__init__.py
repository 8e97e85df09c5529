"""Blob stores: file bytes by content (sha256), for the attachments of user messages and the binary parts of tool
results. The ledger holds only the hash (``ledger.events.values.Attachment``, ``ledger.events.values.ToolPart``).

Guarantees (every back end, see ``store.blobs.api.BlobStore``):
- ``put`` stores bytes once under the sha256 of exactly those bytes and returns it (hex); putting the same bytes
  again stores nothing new.
- ``get`` returns exactly the bytes put, or None for a hash never put (or deleted).
- ``delete`` removes the blobs named and says how many it removed; nothing else is touched.
- Texts over ``ledger.bounds.TEXT_BOUND`` are blobs too (``keep_text``, ``read_text``), and so are those of older
  TinyDB files once read (``FolderBounding``, given to ``store.tinydb.Store``).
"""

from __future__ import annotations

from store.blobs.api import BlobStore, BlobTooLarge, sha256_of
from store.blobs.bounding import FolderBounding
from store.blobs.folder import FolderBlobs
from store.blobs.memory import MemoryBlobs
from store.blobs.postgres import PgBlobs
from store.blobs.text import TEXT_TYPE, keep_text, read_text

__all__ = [
    "TEXT_TYPE",
    "BlobStore",
    "BlobTooLarge",
    "FolderBlobs",
    "FolderBounding",
    "MemoryBlobs",
    "PgBlobs",
    "keep_text",
    "read_text",
    "sha256_of",
]
