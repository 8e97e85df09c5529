"""Bounding the TinyDB files of a data folder into its blob folder (``store.tinydb.bounding``), and the program that
does it for a large file in a process of its own (``store.blobs.rewrite``).

Guarantees:
- ``FolderBounding(root).put`` stores a whole text's bytes as a blob under ``root`` (``store.blobs.folder``).
- ``rewrite(path)`` runs ``store.tinydb.bound_file`` on ``path`` in a new interpreter (so that parsing a file of any
  size never holds this process's interpreter lock) and waits for it (blocking: call it off the event loop); it
  returns what was done, or None when that process failed, timed out (``TIMEOUT`` seconds) or said nothing
  readable. The rewrite is atomic (see ``store.tinydb.bounding``): killed at any point, it leaves the old file or
  the new one, and the next read tries again.
- One rewrite of a file at a time: a second read of the same file (another page opening the chat meanwhile) waits
  for the first and finds the file bounded.
- A file found with nothing to bound is remembered (by path, size and modification time): it is not handed to
  another process again while it stays the same.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

from store.blobs.folder import FolderBlobs
from store.blobs.text import TEXT_TYPE
from store.tinydb import Bounded

log = logging.getLogger("ledger_chat.blobs")
TIMEOUT = 600.0
ROOT = Path(__file__).resolve().parents[2]  # the project folder: the child imports ``store`` from it


class FolderBounding:
    def __init__(self, root: str | Path) -> None:
        self.blobs = FolderBlobs(root)
        self._plain: set[tuple[str, int, int]] = set()
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def put(self, data: bytes) -> str:
        return self.blobs.put(data, TEXT_TYPE)

    def rewrite(self, path: Path) -> Bounded | None:
        with self._lock:
            lock = self._locks.setdefault(str(path), threading.Lock())
        with lock:
            return self._rewrite(path)

    def _rewrite(self, path: Path) -> Bounded | None:
        key = _key(path)
        if key in self._plain:
            return Bounded()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        command = [sys.executable, "-m", "store.blobs.rewrite", str(path), str(self.blobs.root)]
        try:
            done = subprocess.run(command, capture_output=True, timeout=TIMEOUT, env=env, cwd=ROOT, check=False)
            said = json.loads(done.stdout.decode("utf-8").strip().splitlines()[-1]) if done.returncode == 0 else None
        except (OSError, subprocess.TimeoutExpired, ValueError, IndexError) as exc:
            log.warning("bounding %s in another process failed: %s", path, exc)
            return None
        if not isinstance(said, dict):
            log.warning("bounding %s in another process failed: %s", path, done.stderr.decode(errors="replace")[-500:])
            return None
        bounded = Bounded(int(said["moved"]), int(said["cut"]), said.get("aside"))
        if bounded.moved or bounded.cut:
            log.info("%s: %d long text(s) moved into blobs, %d cut", path.name, bounded.moved, bounded.cut)
        else:
            self._plain.add(_key(path))
        return bounded


def _key(path: Path) -> tuple[str, int, int]:
    try:
        stat = path.stat()
    except OSError:
        return (str(path), -1, -1)
    return (str(path), stat.st_size, stat.st_mtime_ns)
