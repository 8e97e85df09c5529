"""Agent presets in the PostgreSQL ``presets`` table (``store/postgres/migrations/0006_presets.sql``): every
instance on one database sees the same presets and versions.

Guarantees (beyond ``store.presets.PresetStore``): ``add`` is one ``INSERT``; a version another instance saved
first is refused by the primary key and raises ``VersionTaken``. Its own small pool (``store.postgres.pool``), a
broken connection retried once for reads; a database that cannot be reached raises ``StoreError`` with a readable
reason (no password).
"""

from __future__ import annotations

import json
from typing import Any, cast

import psycopg

from ledger.errors import StoreError
from ledger.presets import Preset, from_dict, to_dict
from store.postgres.pool import Pool, make_pool, once_more
from store.postgres.schema import describe_db_error, migrate
from store.presets import VersionTaken


class PgPresets:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    @classmethod
    def open(cls, url: str, *, instance: str, read_only: bool = False) -> PgPresets:
        if not read_only:
            migrate(url)
        return cls(make_pool(url, "presets", max_size=2, instance=instance))

    def close(self) -> None:
        self._pool.close()

    def versions(self) -> list[Preset]:
        query = "SELECT doc FROM presets ORDER BY preset_id, version"
        try:
            rows = once_more(self._pool, lambda conn: conn.execute(query).fetchall())
        except psycopg.Error as exc:
            raise StoreError(describe_db_error(exc)[1]) from None
        return [from_dict(_doc(row[0])) for row in rows]

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
            raise StoreError(describe_db_error(exc)[1]) from None


def _doc(value: object) -> dict[str, Any]:
    return cast(dict[str, Any], json.loads(value) if isinstance(value, str) else value)
