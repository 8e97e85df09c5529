"""The event store: one TinyDB file per conversation, an index of conversations, one writer thread.

Guarantees:
- ``append`` assigns the next ``seq`` of the conversation and returns at once (it never touches the disk);
  events become readable through ``events()`` immediately and durable within ``flush_interval`` (250 ms), or
  at once for events that end something (``is_urgent``). A crash loses at most the last unflushed batch.
- All disk writes happen on one writer thread, off the event loop; each write replaces a whole file atomically
  (``ledger.storage``), and costs in proportion to that conversation's size, not to all history.
- A deleted conversation refuses every later write (``ConversationDeletedError``); its file is removed and a
  tombstone kept in the index, so the refusal survives a restart.
- Opening never fails on a damaged file: the bad file is kept aside as ``*.corrupt-<time>``, every complete
  event before the damage is loaded, and a readable line is added to ``problems`` (and to the log).
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tinydb import TinyDB

from ledger.documents import from_documents, to_documents
from ledger.errors import ConversationDeletedError, StoreError, UnknownConversationError
from ledger.events import FLUSH_AT_ONCE_KINDS, AnyEvent, Deleted, Failed
from ledger.storage import AtomicJSONStorage, loads, salvage

log = logging.getLogger("ledger.store")

TABLE = "events"
INDEX_FILE = "index.json"


def is_urgent(event: AnyEvent) -> bool:
    """Events that end an attempt or change the conversation list are written at once."""
    return event.KIND in FLUSH_AT_ONCE_KINDS or (isinstance(event, Failed) and not event.will_retry)


@dataclass(kw_only=True, slots=True)
class StoreStats:
    flushes: int = 0
    write_seconds: float = 0.0
    worst_write_ms: float = 0.0
    events_written: int = 0


class Store:
    """Persistent, append-only events per conversation. Open with ``Store.open(data_dir)``."""

    def __init__(self, data_dir: str | Path, *, flush_interval: float = 0.25, read_only: bool = False) -> None:
        self.data_dir = Path(data_dir)
        self.read_only = read_only
        if not read_only:
            self.data_dir.mkdir(parents=True, exist_ok=True)
        self.flush_interval = flush_interval
        self.problems: list[str] = []
        self.stats = StoreStats()
        self._cond = threading.Condition()
        self._events: dict[str, list[AnyEvent]] = {}
        self._deleted: set[str] = set()
        self._pending: dict[str, list[AnyEvent]] = {}
        self._pending_since: float | None = None
        self._urgent = False
        self._appended = 0
        self._written = 0
        self._closing = False
        self._write_error: str | None = None
        self._dbs: dict[str, TinyDB] = {}
        self._index = TinyDB(self.data_dir / INDEX_FILE, storage=AtomicJSONStorage)
        self._writer = threading.Thread(target=self._write_loop, name="ledger-store-writer", daemon=True)

    @classmethod
    def open(cls, data_dir: str | Path, *, flush_interval: float = 0.25, read_only: bool = False) -> Store:
        """Load every conversation; with ``read_only`` nothing is written, moved or started (for export)."""
        store = cls(data_dir, flush_interval=flush_interval, read_only=read_only)
        store._load()
        if not read_only:
            store._writer.start()
        return store

    # --- reading ---------------------------------------------------------------------------------------------

    def conversation_ids(self) -> list[str]:
        with self._cond:
            return [cid for cid in self._events if cid not in self._deleted]

    def events(self, conversation_id: str) -> tuple[AnyEvent, ...]:
        with self._cond:
            if conversation_id not in self._events:
                raise UnknownConversationError(conversation_id)
            return tuple(self._events[conversation_id])

    def all_events(self) -> list[AnyEvent]:
        with self._cond:
            return [e for cid, events in self._events.items() if cid not in self._deleted for e in events]

    def is_deleted(self, conversation_id: str) -> bool:
        return conversation_id in self._deleted

    # --- writing ---------------------------------------------------------------------------------------------

    def append(self, event: AnyEvent) -> AnyEvent:
        """Give the event its seq, keep it, and queue it for the writer. Raises if the conversation was deleted."""
        cid = event.conversation_id
        if self.read_only:
            raise StoreError("this store was opened read-only")
        with self._cond:
            if cid in self._deleted:
                raise ConversationDeletedError(cid)
            events = self._events.setdefault(cid, [])
            event = replace(event, seq=(events[-1].seq + 1) if events else 1)
            events.append(event)
            self._pending.setdefault(cid, []).append(event)
            self._appended += 1
            if self._pending_since is None:
                self._pending_since = time.monotonic()
            if isinstance(event, Deleted):
                self._deleted.add(cid)
            if is_urgent(event):
                self._urgent = True
            self._cond.notify_all()
        return event

    def flush_sync(self, timeout: float | None = 30.0) -> None:
        """Block until every event appended so far is on disk."""
        if self.read_only:
            return
        with self._cond:
            target = self._appended
            self._urgent = True
            self._cond.notify_all()
            self._cond.wait_for(lambda: self._written >= target or not self._writer.is_alive(), timeout=timeout)

    async def flush(self) -> None:
        await asyncio.to_thread(self.flush_sync)

    def close(self) -> None:
        """Write what is pending and stop the writer."""
        if self.read_only:
            return
        self.flush_sync()
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._writer.join(timeout=10)

    # --- the writer thread -----------------------------------------------------------------------------------

    def _write_loop(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._pending or self._closing)
                while not self._urgent and not self._closing and self._pending_since is not None:
                    left = self.flush_interval - (time.monotonic() - self._pending_since)
                    if left <= 0:
                        break
                    self._cond.wait(timeout=left)
                if not self._pending and self._closing:
                    return
                batch, self._pending = self._pending, {}
                self._pending_since, self._urgent = None, False
                target = self._appended
            failed = self._write_batch(batch)
            with self._cond:
                if failed:
                    for cid, events in failed.items():
                        self._pending[cid] = events + self._pending.get(cid, [])
                    self._pending_since = time.monotonic()
                    self._cond.notify_all()
                else:
                    self._written = target
                    self._cond.notify_all()
            if failed:
                time.sleep(self.flush_interval)

    def _write_batch(self, batch: dict[str, list[AnyEvent]]) -> dict[str, list[AnyEvent]]:
        failed: dict[str, list[AnyEvent]] = {}
        for cid, events in batch.items():
            started = time.perf_counter()
            try:
                if isinstance(events[-1], Deleted):
                    self._remove(cid)
                else:
                    self._db(cid).table(TABLE).insert_multiple(to_documents(events))
            except Exception as exc:  # noqa: BLE001 - the single writer must survive any write error
                failed[cid] = events
                message = f"could not save conversation {cid}: {exc}; will try again"
                if message != self._write_error:
                    self._write_error = message
                    self.problems.append(message)
                    log.error(message)
                continue
            elapsed = time.perf_counter() - started
            self.stats.flushes += 1
            self.stats.write_seconds += elapsed
            self.stats.worst_write_ms = max(self.stats.worst_write_ms, elapsed * 1000)
            self.stats.events_written += len(events)
        return failed

    def _db(self, cid: str) -> TinyDB:
        db = self._dbs.get(cid)
        if db is None:
            db = self._dbs[cid] = TinyDB(self._path(cid), storage=AtomicJSONStorage)
            self._index.table("conversations").insert({"id": cid, "file": self._path(cid).name, "deleted": False})
        return db

    def _remove(self, cid: str) -> None:
        db = self._dbs.pop(cid, None)
        if db is not None:
            db.close()
        self._path(cid).unlink(missing_ok=True)
        table = self._index.table("conversations")
        table.remove(lambda doc: doc.get("id") == cid)
        table.insert({"id": cid, "file": None, "deleted": True, "deleted_at": _now()})

    def _path(self, cid: str) -> Path:
        return self.data_dir / f"conv-{cid}.json"

    # --- loading ---------------------------------------------------------------------------------------------

    def _load(self) -> None:
        entries = self._load_index()
        for entry in entries:
            if entry.get("deleted"):
                self._deleted.add(str(entry["id"]))
        for path in sorted(self.data_dir.glob("conv-*.json")):
            cid = path.stem.removeprefix("conv-")
            if cid in self._deleted:
                continue
            docs = self._load_file(cid, path)
            events, problems = from_documents(cid, docs)
            for problem in problems:
                self._report(f"Conversation {cid}: {problem}")
            events.sort(key=lambda e: e.seq)
            self._events[cid] = events
            storage_data = {TABLE: {str(i): doc for i, doc in enumerate(docs, start=1)}}
            self._dbs[cid] = TinyDB(path, storage=AtomicJSONStorage, data=storage_data)

    def _load_index(self) -> list[dict[str, Any]]:
        path = self.data_dir / INDEX_FILE
        try:
            return list(self._index.table("conversations").all())
        except (json.JSONDecodeError, UnicodeDecodeError, ValueError) as exc:
            if self.read_only:
                self._report(f"The conversation index is damaged ({exc}).")
                return []
            kept = self._keep_aside(path)
            self._report(
                f"The conversation index was damaged ({exc}); it was rebuilt from the files. "
                f"Original kept at {kept.name}."
            )
            self._index = TinyDB(path, storage=AtomicJSONStorage)
            self._index.table("conversations").insert_multiple(
                {"id": p.stem.removeprefix("conv-"), "file": p.name, "deleted": False}
                for p in self.data_dir.glob("conv-*.json")
            )
            return []

    def _load_file(self, cid: str, path: Path) -> list[dict[str, Any]]:
        raw = path.read_bytes()
        try:
            data = loads(raw.decode("utf-8"))
            table = data[TABLE]
            return [table[k] for k in sorted(table, key=int)]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            _, docs = salvage(raw.decode("utf-8", errors="replace"))
            if self.read_only:
                self._report(
                    f"Conversation {cid}: its file is damaged ({type(exc).__name__}); "
                    f"read {len(docs)} stored record(s) before the damage."
                )
                return docs
            kept = self._keep_aside(path)
            AtomicJSONStorage(path).write({TABLE: {str(i): doc for i, doc in enumerate(docs, start=1)}})
            self._report(
                f"Conversation {cid}: its file was damaged ({type(exc).__name__}); recovered {len(docs)} stored "
                f"record(s) before the damage. The original is kept at {kept.name}."
            )
            return docs

    def _keep_aside(self, path: Path) -> Path:
        kept = path.with_name(f"{path.name}.corrupt-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S%f')}")
        path.replace(kept)
        return kept

    def _report(self, message: str) -> None:
        self.problems.append(message)
        log.warning(message)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
