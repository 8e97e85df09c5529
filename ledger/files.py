"""The files of one data folder as the store writes them: its lock, the index, one TinyDB file per conversation.

Guarantees:
- ``take_lock`` holds the folder's lock (``ledger.lock``) before anything is written; every write checks it.
- ``write(cid, events)`` appends the events' documents to the conversation's file, or, when the last event is
  ``deleted``, removes the file and keeps a tombstone in the index. Each file is replaced atomically
  (``ledger.storage``); a write that raises leaves file and cache as they were, so retrying it neither loses nor
  doubles anything. A new conversation is entered in the index before its file is first written.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from tinydb import TinyDB

from ledger.documents import to_documents
from ledger.events import AnyEvent, Deleted
from ledger.lock import DataDirLock
from ledger.opening import INDEX_FILE, INDEX_TABLE, TABLE, Folder
from ledger.storage import AtomicJSONStorage


class FolderFiles:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self._lock: DataDirLock | None = None
        self._dbs: dict[str, TinyDB] = {}
        self._index = TinyDB(data_dir / INDEX_FILE, storage=AtomicJSONStorage, data={})

    def write(self, cid: str, events: Sequence[AnyEvent]) -> None:
        """Make the events durable (or the deletion, when the last one is ``deleted``); raises on any failure."""
        self.take_lock()
        if isinstance(events[-1], Deleted):
            self._remove(cid)
        else:
            self._db(cid).table(TABLE).insert_multiple(to_documents(events))

    def load(self, folder: Folder) -> None:
        """Start from what opening read: the index's documents and each conversation's stored documents."""
        self._index = TinyDB(self.data_dir / INDEX_FILE, storage=AtomicJSONStorage, data=folder.index)
        for cid, docs in folder.docs.items():
            data = {TABLE: {str(i): doc for i, doc in enumerate(docs, start=1)}}
            self._dbs[cid] = TinyDB(self.path(cid), storage=AtomicJSONStorage, data=data)

    def take_lock(self) -> None:
        """Hold the folder's lock; raises ``DataDirInUseError`` or the ``OSError`` of an unwritable folder."""
        if self._lock is None or not self._lock.held:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            self._lock = DataDirLock.acquire(self.data_dir)

    def release(self) -> None:
        if self._lock is not None:
            self._lock.release()

    def path(self, cid: str) -> Path:
        return self.data_dir / f"conv-{cid}.json"

    def _db(self, cid: str) -> TinyDB:
        db = self._dbs.get(cid)
        if db is None:
            self._index.table(INDEX_TABLE).insert({"id": cid, "file": self.path(cid).name, "deleted": False})
            db = self._dbs[cid] = TinyDB(self.path(cid), storage=AtomicJSONStorage)
        return db

    def _remove(self, cid: str) -> None:
        db = self._dbs.pop(cid, None)
        if db is not None:
            db.close()
        self.path(cid).unlink(missing_ok=True)
        table = self._index.table(INDEX_TABLE)
        table.remove(lambda doc: doc.get("id") == cid)
        table.insert({"id": cid, "file": None, "deleted": True, "deleted_at": _now()})


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
