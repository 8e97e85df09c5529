"""One conversation's files as the writer keeps them: the compacted file (``conv-<id>.json``, TinyDB's JSON, replaced
atomically) and the log of the batches written since (``conv-<id>.log``, ``store.tinydb.records``), appended to.

Guarantees:
- ``append(docs)`` makes one batch durable. A new conversation's first batch is its compacted file, written
  atomically as before (temp file, fsync, rename, fsync of the folder); every later batch is one record appended
  to the log with one ``write`` and one ``fdatasync`` (the folder is fsynced once, when the log is made). What it
  costs follows the batch, never what the conversation already holds. A write that raises cuts the log back to
  where it ended, so a retry neither loses nor doubles anything.
- Nothing is ever appended after bytes that are not good records: before this object's first append, a log longer
  than its good part (a damaged tail that could not be kept aside when it was read, or the rest of a write whose
  cut failed) has that tail kept aside (``<name>.corrupt-<time>``, fsynced; ``cut_tail``) and cut off; when that
  cannot be done, the append raises (saving fails, is reported and retried: ``store.writer``).
- ``due`` says the log has grown to the size of the compacted file (both together hold about twice what the last
  compaction wrote; the log at least ``COMPACT_FROM`` bytes): rewriting then costs, spread over the batches that
  grew it, about one more write of each byte. ``compact()`` writes the compacted file with everything of both,
  atomically, then removes the log; killed at any point it leaves the old file and the whole log, or the new file
  and a log whose records it holds (skipped by seq when read: ``records.scan``). It refuses (raises
  ``ValueError``) when either file does not read whole: damage is for opening to keep aside, never compacted away.
- Readers read the log before the compacted file (``read_log``, then the file): a compaction by another process
  between the two reads gives the old log with the new file (its records skipped), never the old file without
  the log. Export reads this way while the app writes.
- ``ConversationLog`` is a TinyDB ``Storage``: ``TinyDB(path, storage=ConversationLog)`` reads the documents of
  both files, and an ``insert`` appends only the new documents (the store calls ``append`` itself: TinyDB's insert
  rebuilds the whole table in memory first, a cost that follows the conversation's length).
"""

from __future__ import annotations

import contextlib
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tinydb.storages import Storage

from store.tinydb.documents import last_seq
from store.tinydb.records import MAGIC, record, scan
from store.tinydb.storage import atomic_write, dumps, fsync_dir, loads

TABLE = "events"
#: A log shorter than this is never compacted (small conversations: their log is read in well under a millisecond).
COMPACT_FROM = 256 * 1024


def log_path(path: Path) -> Path:
    """The log beside a conversation's compacted file."""
    return path.with_suffix(".log")


def read_log(path: Path) -> bytes:
    """The bytes of the log beside ``path`` (empty when there is none); read it before the compacted file."""
    try:
        return log_path(path).read_bytes()
    except FileNotFoundError:
        return b""


def table_docs(data: Any) -> list[dict[str, Any]]:
    """The documents of a compacted file's parsed content, in order; raises on any other shape."""
    table = data[TABLE]
    docs = [table[key] for key in sorted(table, key=int)]
    if not all(isinstance(doc, dict) for doc in docs):
        raise TypeError("a stored record is not an object")
    return docs


def as_table(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return {TABLE: {str(n): doc for n, doc in enumerate(docs, start=1)}}


def cut_tail(log: Path, end: int) -> str | None:
    """Keep what follows ``end`` in ``log`` aside (a new file, fsynced) and cut the log there; the kept file's name,
    or None when nothing follows. Raises ``OSError`` (and cuts nothing) when the tail cannot be kept."""
    with open(log, "r+b") as handle:
        handle.seek(end)
        tail = handle.read()
        if not tail:
            return None
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
        kept = log.with_name(f"{log.name}.corrupt-{stamp}")
        with open(kept, "xb") as aside:
            aside.write(tail)
            aside.flush()
            os.fsync(aside.fileno())
        fsync_dir(log.parent)
        handle.truncate(end)
        handle.flush()
        os.fsync(handle.fileno())
    return kept.name


class ConversationLog(Storage):
    """The writer's handle on one conversation's files (see the module); ``base_bytes`` and ``end`` as a read found
    them (the compacted file's size, the end of the log's good records), else looked up."""

    def __init__(self, path: str | os.PathLike[str], *, base_bytes: int | None = None, end: int | None = None) -> None:
        self.path = Path(path)
        self.log = log_path(self.path)
        if base_bytes is None or end is None:
            base_bytes = self.path.stat().st_size if self.path.exists() else 0
            end = scan(read_log(self.path)).end
        self.base_bytes, self.end = base_bytes, end
        self._fd: int | None = None
        self._count: int | None = None  # documents on disk, for TinyDB's ``write``

    # --- what the store uses ---------------------------------------------------------------------------------

    def append(self, docs: list[dict[str, Any]]) -> None:
        """Make ``docs`` (one batch) durable; raises on any failure, leaving the files as they were."""
        if not docs:
            return
        if self.base_bytes == 0 and self.end == 0 and not self.path.exists() and not self.log.exists():
            payload = dumps(as_table(docs))
            atomic_write(self.path, payload)
            self.base_bytes = len(payload)
            return
        fd = self._open()
        data = record(docs) if self.end else MAGIC + record(docs)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fdatasync(fd)
        except BaseException:
            try:
                os.ftruncate(fd, self.end)
            except OSError:
                self.close()  # the next append opens it again and keeps aside what is beyond the end
            raise
        self.end += len(data)

    @property
    def due(self) -> bool:
        """Whether the log has grown enough to be compacted."""
        return self.end >= max(self.base_bytes, COMPACT_FROM)

    def compact(self) -> int:
        """Rewrite the compacted file with the log's records and remove the log; the new file's size."""
        tail = read_log(self.path)
        docs = table_docs(loads(self.path.read_bytes())) if self.path.exists() else []
        found = scan(tail, after=last_seq(docs))
        if found.damaged or found.end < self.end:
            raise ValueError(f"{self.log.name} does not read whole ({found.problem or 'shorter than written'})")
        payload = dumps(as_table(docs + found.docs))
        atomic_write(self.path, payload)
        self.close()
        self.log.unlink(missing_ok=True)
        fsync_dir(self.path.parent)
        self.base_bytes, self.end = len(payload), 0
        return len(payload)

    def remove(self) -> None:
        """Remove both files (a deleted conversation): the log first, so that no log outlives its file."""
        self.close()
        self.log.unlink(missing_ok=True)
        self.path.unlink(missing_ok=True)

    def _open(self) -> int:
        if self._fd is not None:
            return self._fd
        made = not self.log.exists()
        fd = os.open(self.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            if made:
                fsync_dir(self.path.parent)
            size = os.fstat(fd).st_size
            if size < self.end:  # shorter than written: changed from outside; go on after its good part
                self.end = scan(read_log(self.path)).end
                size = os.fstat(fd).st_size
            if size > self.end:
                cut_tail(self.log, self.end)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return fd

    # --- TinyDB's storage interface ----------------------------------------------------------------------------

    def read(self) -> dict[str, Any] | None:
        tail = read_log(self.path)
        docs = table_docs(loads(self.path.read_bytes())) if self.path.exists() else []
        docs += scan(tail, after=last_seq(docs)).docs
        self._count = len(docs)
        return as_table(docs) if docs else None

    def write(self, data: dict[str, Any]) -> None:
        if self._count is None:
            self.read()
        table = data.get(TABLE, {})
        if len(table) < (self._count or 0) or set(data) - {TABLE}:
            raise ValueError("a conversation's files only grow: records are added, never changed or removed")
        self.append(list(table.values())[self._count or 0 :])
        self._count = len(table)

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
