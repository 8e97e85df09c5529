"""Agent presets in the PostgreSQL ``presets`` table (``store/postgres/migrations/0006_presets.sql``): every
instance on one database sees the same presets and versions.

Guarantees (beyond ``store.presets.stores.PresetStore``): ``add`` is one ``INSERT``; a version another instance saved
first is refused by the primary key and raises ``VersionTaken``. Opened, pooled and mapped like every side store
(``store.postgres.side``): its own small pool, a broken connection retried once for reads (never for ``add``); a
database that cannot be reached raises ``StoreError`` with a readable reason (no password).

Reads never wait for the database: every page render reads the presets (the picker), on the event loop, and a
database that is down or slow must not stall the pages. ``open`` reads the table once; after that ``versions``
answers from memory, and when its copy is older than ``REFRESH`` seconds it starts one read on a thread of its
own (the next call sees the result): another instance's save shows within about a second, this instance's own at
once (``add`` adds it to the copy). A read that fails keeps the copy as it was (the next call tries again).
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any, Self, cast

import psycopg

from ledger.errors import StoreError
from ledger.presets import Preset, from_dict, to_dict
from store.postgres.pool import Pool
from store.postgres.side import SideStore, store_error
from store.presets import VersionTaken

REFRESH = 1.0  # seconds a read copy is answered from memory before it is read again, off the caller's thread


class PgPresets(SideStore):
    POOL, POOL_SIZE = "presets", 2

    def __init__(self, pool: Pool) -> None:
        super().__init__(pool)
        self._lock = threading.Lock()
        self._copy: list[Preset] | None = None
        self._read_at = 0.0
        self._reading = False
        self._added: list[Preset] = []  # saved here: kept in the copy even by a read that began before the save

    @classmethod
    def open(cls, url: str, *, instance: str, read_only: bool = False) -> Self:
        store = super().open(url, instance=instance, read_only=read_only)
        store._read()
        return store

    def versions(self) -> list[Preset]:
        """Every version, from the copy in memory (see the module); the database only when there is no copy."""
        with self._lock:
            copy, stale = self._copy, time.monotonic() - self._read_at > REFRESH
            if copy is not None and stale and not self._reading:
                self._reading = True
                threading.Thread(target=self._refresh, name="presets-refresh", daemon=True).start()
        return list(copy) if copy is not None else self._read()

    def _read(self) -> list[Preset]:
        query = "SELECT doc FROM presets ORDER BY preset_id, version"
        rows = self._run(lambda conn: conn.execute(query).fetchall())
        read = [from_dict(_doc(row[0])) for row in rows]
        with self._lock:
            known = {(p.preset_id, p.version) for p in read}
            read = _ordered([*read, *(p for p in self._added if (p.preset_id, p.version) not in known)])
            self._copy, self._read_at = read, time.monotonic()
        return list(read)

    def _refresh(self) -> None:
        try:
            self._read()
        except StoreError:
            pass  # the database is away: the copy stays, the next call tries again
        finally:
            with self._lock:
                self._reading = False

    def add(self, preset: Preset) -> None:
        doc = json.dumps(to_dict(preset), ensure_ascii=False)
        try:
            with self._pool.connection() as conn:
                conn.execute(
                    "INSERT INTO presets (preset_id, version, doc) VALUES (%s, %s, %s::jsonb)",
                    (preset.preset_id, preset.version, doc),
                )
        except psycopg.errors.UniqueViolation:
            raise VersionTaken(f"version {preset.version} of preset {preset.preset_id} exists already") from None
        except psycopg.Error as exc:
            raise store_error(exc) from None
        with self._lock:  # this instance's own save shows at once, in the table's order
            self._added.append(preset)
            if self._copy is not None:
                self._copy = _ordered([*self._copy, preset])


def _ordered(presets: list[Preset]) -> list[Preset]:
    return sorted(presets, key=lambda p: (p.preset_id, p.version))


def _doc(value: object) -> dict[str, Any]:
    return cast(dict[str, Any], json.loads(value) if isinstance(value, str) else value)
