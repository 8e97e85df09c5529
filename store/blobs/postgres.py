"""Blobs in the PostgreSQL ``blobs`` table (``store/postgres/migrations/0004_blobs.sql``): every instance on one
database sees the same blobs.

Guarantees (beyond ``store.blobs.api.BlobStore``):
- ``put`` is one idempotent statement (``INSERT ... ON CONFLICT DO NOTHING``): instances putting the same bytes
  together store one row; ``get`` checks the bytes against their name (a row that does not match reads as
  missing, with a warning); a blob over ``MAX_BYTES`` (what one ``bytea`` row holds comfortably) raises
  ``BlobTooLarge``.
- Opened, pooled and mapped like every side store (``store.postgres.side``): its own small pool of connections, so
  a large blob never waits behind, or holds up, the event writer; a connection that broke is retried once. A
  database that cannot be reached raises ``StoreError`` with a readable reason (no password).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import cast

from store.blobs.api import BlobTooLarge, sha256_of
from store.blobs.folder import is_sha256
from store.postgres import SideStore

log = logging.getLogger("ledger_chat.blobs")
MAX_BYTES = 256 * 1024 * 1024


class PgBlobs(SideStore):
    POOL, POOL_SIZE = "blobs", 2

    def put(self, data: bytes, media_type: str = "application/octet-stream") -> str:
        if len(data) > MAX_BYTES:
            raise BlobTooLarge(f"{len(data):,} bytes is more than a blob here holds ({MAX_BYTES:,} bytes)")
        digest = sha256_of(data)
        self._run(
            lambda conn: conn.execute(
                "INSERT INTO blobs (sha256, media_type, size, data) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (sha256) DO NOTHING",
                (digest, media_type, len(data), data),
            )
        )
        return digest

    def get(self, sha256: str) -> bytes | None:
        if not is_sha256(sha256):
            return None
        row = self._run(lambda conn: conn.execute("SELECT data FROM blobs WHERE sha256 = %s", (sha256,)).fetchone())
        if row is None:
            return None
        data = bytes(cast(bytes, row[0]))
        if sha256_of(data) != sha256:
            log.warning("blob %s: its bytes do not match its name; read as missing", sha256)
            return None
        return data

    def has(self, sha256: str) -> bool:
        if not is_sha256(sha256):
            return False
        query = "SELECT 1 FROM blobs WHERE sha256 = %s"
        return self._run(lambda conn: conn.execute(query, (sha256,)).fetchone()) is not None

    def delete(self, hashes: Iterable[str]) -> int:
        names = sorted(h for h in set(hashes) if is_sha256(h))
        if not names:
            return 0
        cursor = self._run(lambda conn: conn.execute("DELETE FROM blobs WHERE sha256 = ANY(%s)", (names,)))
        return int(cursor.rowcount)
