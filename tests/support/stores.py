"""Both stores behind one maker, for the store contract suite: TinyDB in a temp dir, PostgreSQL in a fresh database.

``StoreMaker.open()`` opens a store on the test's one location (reopening gives the same ledger); ``child`` gives
the command line of ``tests/support/append_child.py`` on that location, for tests with two processes.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ledger.pg_store import PgStore
from ledger.store import Store
from ledger.store_api import EventStore


class StoreMaker:
    def __init__(self, kind: str, location: str) -> None:
        self.kind, self.location = kind, location
        self.opened: list[EventStore] = []

    def open(self, **options: Any) -> EventStore:
        options.setdefault("flush_interval", 0.05)
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
