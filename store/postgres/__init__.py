"""The PostgreSQL back end, for several instances on one database: events in one table with a seq per conversation,
written in batches by a writer thread, followed live (LISTEN/NOTIFY), write leases per conversation, attempt
owners with fencing epochs, the side stores (blobs, grants, presets) and the schema's migrations.

Guarantees (``store.api.EventStore``): an attempt's events are written only by the instance holding its epoch;
a conversation is written by one instance at a time; a database that does not answer is a ``StoreError``.
"""

from __future__ import annotations

from store.postgres.leases import is_dead
from store.postgres.owners import EVERYONE, AttemptOwners, Request
from store.postgres.presets import PgPresets
from store.postgres.rows import column_text, copy_rows
from store.postgres.schema import connect, migrate, redact_dsn
from store.postgres.side import SideStore
from store.postgres.store import PgStore

__all__ = [
    "EVERYONE",
    "AttemptOwners",
    "PgPresets",
    "PgStore",
    "Request",
    "SideStore",
    "column_text",
    "connect",
    "copy_rows",
    "is_dead",
    "migrate",
    "redact_dsn",
]
