"""Room kept for the last save: a reserve file in the data folder, and a spill file outside it.

A full disk is reported at once and what waits stays in memory (``store.writer``); that holds while the app runs.
At shutdown there is no later: what waits must reach a disk now, or it is lost with the process.

Guarantees:
- ``Reserve.make`` allocates ``RESERVE_NAME`` (``size`` bytes, ``posix_fallocate``: real blocks, not a sparse
  file) in the data folder when it is missing; a disk too full for it is no error (the reserve is then absent and
  ``make`` says False). The store makes it at every writable open.
- ``Reserve.release`` deletes it, so its blocks are free at once for the writes that follow; the store releases
  it only while closing, after a write failed for a full disk, and then writes again.
- ``no_room(folder)`` says the disk is full before a write fails: fewer than ``LOW_ROOM`` bytes free there
  (``statvfs``). The store reports it after a batch that was written (``health().saving_fails``, the banner),
  and keeps probing with its retries until there is room again.
- ``spill`` writes events that still could not be saved for a full disk (only then: a read-only folder is a
  mistake to be told, not worked around) as JSON Lines to ``spill_path(data_dir, folder)``, a file
  named after the data folder in another writable folder (the system's temp folder by default), fsynced;
  ``read_spill`` reads it at the next open, for the store to append what its files do not hold yet (and remove
  the file once that is saved). A spill file that cannot be read is kept aside (``.corrupt``), never deleted.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ledger.codec import from_jsonl, to_jsonl
from ledger.events import AnyEvent

__all__ = [
    "LOW_ROOM",
    "RESERVE_BYTES",
    "RESERVE_NAME",
    "Reserve",
    "is_full",
    "no_room",
    "read_spill",
    "spill",
    "spill_path",
]

RESERVE_NAME = ".reserve"
RESERVE_BYTES = 4 * 1024 * 1024  # the last batches of a shutdown: thousands of events
#: Fewer free bytes than this and the disk counts as full (a few batches: the next writes would fail).
LOW_ROOM = 16 * 1024


def is_full(error: BaseException | None) -> bool:
    """Whether ``error`` is a full disk (or a used-up quota)."""
    return isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT)


def no_room(folder: Path) -> OSError | None:
    """A full-disk error when the file system of ``folder`` has fewer than ``LOW_ROOM`` bytes free for this
    process, else None (also when that cannot be read). A write that fits in the last block of a file succeeds
    on a full disk (an append-only log's small records do for a while): without this look, the first failed write
    would tell the user, seconds later, what ``statvfs`` says at once."""
    try:
        found = os.statvfs(folder)
    except OSError:
        return None
    if found.f_bavail * found.f_frsize >= LOW_ROOM:
        return None
    return OSError(errno.ENOSPC, f"fewer than {LOW_ROOM // 1024} KiB free", str(folder / RESERVE_NAME))


class Reserve:
    """The reserve file of one data folder (see the module)."""

    def __init__(self, folder: Path, size: int = RESERVE_BYTES) -> None:
        self.path, self.size = folder / RESERVE_NAME, size

    def make(self) -> bool:
        """Allocate the reserve when it is missing; whether it is there afterwards."""
        if self.size <= 0:
            return False
        if self.path.exists():
            return True
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600)
            try:
                os.posix_fallocate(fd, 0, self.size)
            finally:
                os.close(fd)
        except OSError:
            with contextlib.suppress(OSError):
                self.path.unlink()
            return False
        return True

    def release(self) -> bool:
        """Free the reserve's space; whether there was one to free."""
        try:
            self.path.unlink()
        except OSError:
            return False
        return True


def spill_path(data_dir: Path, folder: Path | None = None) -> Path:
    """The spill file of ``data_dir``: in ``folder`` (default: the system's temp folder), named after the data
    folder's absolute path, so that two data folders never share one."""
    key = hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:16]
    return (folder or Path(tempfile.gettempdir())) / f"ledgerchat-spill-{key}.jsonl"


def spill(path: Path, events: Iterable[AnyEvent]) -> int:
    """Append ``events`` to the spill file, fsynced; how many were written (raises ``OSError`` if it cannot)."""
    lines = list(to_jsonl(events))
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as handle:
        handle.writelines(lines)
        handle.flush()
        os.fsync(handle.fileno())
    return len(lines)


def read_spill(path: Path) -> tuple[list[AnyEvent], str | None]:
    """The events of the spill file (the caller removes it once they are saved); ``([], reason)`` for one that
    cannot be read, which is kept aside."""
    if not path.exists():
        return [], None
    try:
        events = from_jsonl(path.read_text(encoding="utf-8").splitlines())
    except Exception as exc:  # noqa: BLE001 - a damaged spill file is reported and kept, never a crash at start-up
        aside = path.with_suffix(".corrupt")
        with contextlib.suppress(OSError):
            path.rename(aside)
        return [], f"the spill file {path} could not be read ({type(exc).__name__}); kept as {aside.name}"
    return events, None
