"""Both stores behind one maker, for the store tests: TinyDB in a temp dir, PostgreSQL in a fresh database.

``StoreMaker.open()`` opens a store on the test's one location (reopening gives the same ledger), with the
maker's flush interval unless the test names one; ``close_all`` closes every store it opened. ``child`` gives
the command line of ``tests/support/append_child.py`` on that location, for tests with two processes.
``fill`` appends events and returns them as stored (with their seqs).
``write_tinydb_folder`` lays out a TinyDB data folder directly, for the migration tests.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from ledger.events.core import AnyEvent
from store.api import EventStore
from store.postgres.store import PgStore
from store.tinydb.documents import to_documents
from store.tinydb.storage import dumps
from store.tinydb.store import Store


class StoreMaker:
    def __init__(self, kind: str, location: str, *, flush_interval: float = 0.05) -> None:
        self.kind, self.location, self.flush_interval = kind, location, flush_interval
        self.opened: list[EventStore] = []

    @property
    def folder(self) -> Path:
        """The TinyDB data folder the stores are opened on."""
        assert self.kind == "tinydb", "a PostgreSQL store has no folder"
        return Path(self.location)

    def open(self, **options: Any) -> EventStore:
        options.setdefault("flush_interval", self.flush_interval)
        store: EventStore
        if self.kind == "postgres":
            store = PgStore.open(self.location, **options)
        else:
            store = Store.open(Path(self.location), **options)
        self.opened.append(store)
        return store

    def child(self, name: str, count: int) -> list[str]:
        return [sys.executable, "-m", "tests.support.append_child", self.kind, self.location, name, str(count)]

    def close_all(self) -> None:
        for store in self.opened:
            store.close()


def fill(store: EventStore, events: Iterable[AnyEvent]) -> list[AnyEvent]:
    """Append the events one by one; what the store gave back (with their seqs)."""
    return [store.append(e) for e in events]


def write_tinydb_folder(
    data_dir: Path, conversations: dict[str, list[AnyEvent]], deleted: tuple[str, ...] = ()
) -> dict[str, list[AnyEvent]]:
    """A data folder exactly as the TinyDB store lays it out (``store.tinydb.documents``, ``index.json``),
    written in one go (the store itself fsyncs each file, which for a thousand conversations takes longer than a
    test may).
    Returns the events as stored: with their seqs, 1, 2, 3... per conversation."""
    data_dir.mkdir(parents=True, exist_ok=True)
    index, stored = {}, {}
    for n, (cid, events) in enumerate(conversations.items(), start=1):
        stored[cid] = [replace(e, seq=seq) for seq, e in enumerate(events, start=1)]
        docs = to_documents(stored[cid])
        (data_dir / f"conv-{cid}.json").write_bytes(dumps({"events": {str(i): d for i, d in enumerate(docs, 1)}}))
        index[str(n)] = {"id": cid, "file": f"conv-{cid}.json", "deleted": False}
    for n, cid in enumerate(deleted, start=len(index) + 1):
        index[str(n)] = {"id": cid, "file": None, "deleted": True}
    (data_dir / "index.json").write_bytes(dumps({"conversations": index}))
    return stored
