"""Blobs as files under a folder (the TinyDB store's ``<data-dir>/blobs``): ``blobs/ab/<sha256>``, by content.

Guarantees (beyond ``store.blobs.api.BlobStore``):
- A blob is written atomically: a temp file in the same folder, fsync, rename over the name, fsync of the folder;
  a crash or a full disk leaves either the whole blob or none (a stray ``.tmp-*`` file is ignored and removed by
  the next put of the same blob). One process writes the folder (the TinyDB store's lock), and one lock here
  serialises this process's writers; putting bytes already stored writes nothing.
- Reading checks the content: a file whose bytes do not hash to its name (damaged, or put there by hand) reads as
  missing (``get`` is None) with a warning in the log, and never raises; ``has`` only looks for the file (cheap),
  ``put`` rewrites a damaged one; a name that is not a sha256 is never a path (no ``..``, no separators).
- ``read_only`` (export) never creates, writes or removes anything.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

from store.blobs.api import sha256_of
from store.tinydb import fsync_dir

log = logging.getLogger("ledger_chat.blobs")
HEX = re.compile(r"[0-9a-f]{64}")


def is_sha256(name: str) -> bool:
    return HEX.fullmatch(name) is not None


class FolderBlobs:
    def __init__(self, root: str | Path, *, read_only: bool = False) -> None:
        self.root, self.read_only = Path(root), read_only
        self._lock = threading.Lock()

    def path(self, sha256: str) -> Path | None:
        return self.root / sha256[:2] / sha256 if is_sha256(sha256) else None

    def put(self, data: bytes, media_type: str = "application/octet-stream") -> str:
        digest = sha256_of(data)
        path = self.path(digest)
        assert path is not None
        if self.read_only:
            raise PermissionError(f"the blob folder {self.root} is open read-only")
        with self._lock:
            if self._intact(path, digest):
                return digest
            path.parent.mkdir(parents=True, exist_ok=True)
            temp = path.with_name(f".tmp-{digest}-{os.getpid()}-{threading.get_ident()}")  # a bounding child too
            with open(temp, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, path)
            fsync_dir(path.parent)
        return digest

    def get(self, sha256: str) -> bytes | None:
        path = self.path(sha256)
        if path is None:
            return None
        try:
            data = path.read_bytes()
        except OSError:
            return None
        if sha256_of(data) != sha256:
            log.warning("blob %s: its bytes do not match its name (damaged or foreign file); read as missing", path)
            return None
        return data

    def has(self, sha256: str) -> bool:
        path = self.path(sha256)
        try:
            return path is not None and path.is_file()
        except OSError:
            return False

    def delete(self, hashes: Iterable[str]) -> int:
        removed = 0
        with self._lock:
            for sha in set(hashes):
                path = self.path(sha)
                if path is None or self.read_only:
                    continue
                try:
                    path.unlink()
                    removed += 1
                except OSError:
                    continue
        return removed

    def hashes(self) -> Iterator[str]:
        """Every stored blob's name (not checked)."""
        if self.root.is_dir():
            for path in self.root.glob("??/*"):
                if is_sha256(path.name) and path.parent.name == path.name[:2]:
                    yield path.name

    def _intact(self, path: Path, sha256: str) -> bool:
        try:
            if not path.is_file():
                return False
        except OSError:
            return False
        return self.get(sha256) is not None
