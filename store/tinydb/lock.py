"""One process per data folder: an exclusive ``flock`` on ``<data_dir>/.lock`` that holds the owner's PID.

Guarantees:
- ``DataDirLock.acquire(folder)`` returns a held lock, or raises ``DataDirInUseError`` naming the PID the holder
  wrote into the file. Nothing else in the folder is touched before the lock is held.
- The kernel releases the lock when its process ends, however it ends (even ``kill -9``): a lock file left
  behind never blocks a later start.
- A folder where the lock file cannot be created or opened for writing (read-only, no permission, gone) raises
  the ``OSError`` for the caller to report: no process can write there, so no two can corrupt it.
- ``release()`` is idempotent. Readers (``main.py export``) never take the lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from ledger.errors import DataDirInUseError

LOCK_FILE = ".lock"


class DataDirLock:
    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, folder: Path) -> DataDirLock:
        """Take the folder's lock without waiting; raise ``DataDirInUseError`` if another process holds it."""
        path = folder / LOCK_FILE
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_pid(fd)
            os.close(fd)
            raise DataDirInUseError(folder, holder) from None
        except BaseException:
            os.close(fd)
            raise
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except OSError:
            pass  # the lock is what counts; the PID is only there to name the holder
        return cls(path, fd)

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    @property
    def held(self) -> bool:
        return self._fd is not None


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None
