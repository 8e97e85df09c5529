"""``Files``: what the engine does with the files people attach (the ``Engine.files`` service).

Guarantees:
- ``accept(name, data)`` (async: the work runs on a thread) refuses an empty file and a file over the per-file
  limit with a sentence naming the limit (``InputRejected``), sniffs the type from the bytes
  (``engine.files.sniff``), re-encodes raster images without metadata (``engine.files.images``: the stored bytes
  ARE the re-encoded image), stores the bytes in the blob store by sha256 and returns the ``Attachment`` the
  ledger records. Nothing is stored for a refused file.
- ``check_message(attachments)`` refuses a message with more than ``max_files`` files, more than
  ``max_message_bytes`` together, or a file whose bytes are no longer stored, each with a sentence.
- Raster images are decoded within the memory budget of ``engine.files.decoding``: an image whose header says it
  is over it is refused (``InputRejected``, a sentence) before it waits or decodes; every decode (re-encoding,
  thumbnails) runs through ``GATE``: at most two at once, the others waiting in order, memory given back after.
- ``read(sha256)`` and ``thumbnail(sha256)`` are blocking and thread-safe (call them off the event loop);
  thumbnails are made once per blob and kept in a small in-memory cache (``THUMB_CACHE`` entries).
"""

from __future__ import annotations

import asyncio
import re
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

from engine.files.decoding import GATE
from engine.files.images import ImageProblem, clean, precheck, thumbnail
from engine.files.sniff import RASTER, sniff
from ledger.decide import InputRejected
from ledger.events import Attachment
from store.blobs import BlobStore, MemoryBlobs

MB = 1024 * 1024
DEFAULT_FILE_MB = 20
DEFAULT_MESSAGE_MB = 50
DEFAULT_FILES = 10
THUMB_CACHE = 256
NAME_CHARS = 200


@dataclass(frozen=True, slots=True)
class FileLimits:
    max_file_bytes: int = DEFAULT_FILE_MB * MB
    max_message_bytes: int = DEFAULT_MESSAGE_MB * MB
    max_files: int = DEFAULT_FILES

    @classmethod
    def from_mb(cls, file_mb: float, files: int = DEFAULT_FILES) -> FileLimits:
        """The limits for ``--max-attachment-mb``: a message holds at least 50 MB, or the size of one file."""
        if not 0 < file_mb <= 1024:
            raise ValueError(f"--max-attachment-mb: {file_mb:g} must be more than 0 and at most 1024")
        per_file = int(file_mb * MB)
        return cls(per_file, max(DEFAULT_MESSAGE_MB * MB, per_file), files)


def megabytes(size: int) -> str:
    value = size / MB
    return f"{value:.1f} MB" if value < 10 else f"{value:.0f} MB"


def clean_name(name: str) -> str:
    """A file name as it is recorded and shown: the last path component, no control characters, at most 200."""
    base = re.split(r"[\\/]", name)[-1]
    base = "".join(ch for ch in base if unicodedata.category(ch)[0] != "C").strip().strip(".")
    return base[:NAME_CHARS] or "file"


class Files:
    def __init__(self, blobs: BlobStore | None = None, limits: FileLimits | None = None) -> None:
        self.blobs: BlobStore = blobs if blobs is not None else MemoryBlobs()
        self.limits = limits or FileLimits()
        self._thumbs: OrderedDict[str, bytes | None] = OrderedDict()
        self._lock = threading.Lock()

    async def accept(self, name: str, data: bytes) -> Attachment:
        if sniff(name, data[:64]) not in RASTER:  # a raster image is known by its first bytes
            return await asyncio.to_thread(self.accept_now, name, data)
        try:
            await asyncio.to_thread(precheck, data)  # over the budget: refused before it waits or decodes
        except ImageProblem as exc:
            raise InputRejected(f"{clean_name(name)}: {exc}") from None
        return await GATE.run_async(self.accept_now, name, data)

    def accept_now(self, name: str, data: bytes) -> Attachment:
        """``accept`` on the calling thread (blocking)."""
        name = clean_name(name)
        if not data:
            raise InputRejected(f"{name} is empty: there is nothing to attach.")
        limit = self.limits.max_file_bytes
        if len(data) > limit:
            raise InputRejected(
                f"{name} is {megabytes(len(data))}; the limit is {megabytes(limit)} per file (--max-attachment-mb)."
            )
        media_type = sniff(name, data)
        width = height = None
        if media_type in RASTER:
            try:
                cleaned = GATE.run(clean, data, media_type)
            except ImageProblem as exc:
                raise InputRejected(f"{name}: {exc}") from None
            data, width, height = cleaned.data, cleaned.width, cleaned.height
        sha = self.blobs.put(data, media_type)
        return Attachment(sha256=sha, name=name, media_type=media_type, size=len(data), width=width, height=height)

    def check_message(self, attachments: Iterable[Attachment]) -> None:
        files = tuple(attachments)
        limits = self.limits
        if len(files) > limits.max_files:
            raise InputRejected(f"A message takes at most {limits.max_files} files; this one has {len(files)}.")
        total = sum(a.size for a in files)
        if total > limits.max_message_bytes:
            raise InputRejected(
                f"These files come to {megabytes(total)}; the limit is {megabytes(limits.max_message_bytes)} "
                "per message. Remove some and send again."
            )
        for a in files:
            if not self.blobs.has(a.sha256):
                raise InputRejected(f"{a.name} is no longer stored here; attach it again.")

    def read(self, sha256: str) -> bytes | None:
        return self.blobs.get(sha256)

    def thumbnail(self, sha256: str) -> bytes | None:
        with self._lock:
            if sha256 in self._thumbs:
                self._thumbs.move_to_end(sha256)
                return self._thumbs[sha256]
        data = self.read(sha256)
        thumb = GATE.run(thumbnail, data) if data is not None else None
        if data is not None:
            with self._lock:
                self._thumbs[sha256] = thumb
                while len(self._thumbs) > THUMB_CACHE:
                    self._thumbs.popitem(last=False)
        return thumb

    def forget(self, hashes: Iterable[str]) -> int:
        """Delete these blobs (nothing references them any more); how many were stored."""
        hashes = set(hashes)
        with self._lock:
            for sha in hashes:
                self._thumbs.pop(sha, None)
        return self.blobs.delete(hashes)
