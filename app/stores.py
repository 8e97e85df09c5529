"""Which store the configuration asks for: PostgreSQL with ``--database-url``, else the TinyDB files of
``--data-dir``. Guarantees: the back end's module is imported only when chosen (psycopg is not loaded for TinyDB)."""

from __future__ import annotations

from app.config import AppConfig
from store.api import EventStore


def open_store(config: AppConfig, *, read_only: bool = False) -> EventStore:
    if config.database_url:
        from store.postgres.store import PgStore

        return PgStore.open(config.database_url, read_only=read_only)
    from store.tinydb.store import Store

    return Store.open(config.data_dir, read_only=read_only)
