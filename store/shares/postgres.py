"""Share links in the PostgreSQL ``share_links`` table (``store/postgres/migrations/0010_share_links.sql``): every
instance on one database finds the same links, at every request (no cache), so a revoke on one instance holds on
every other from its next request on.

Guarantees (beyond ``store.shares.api.ShareStore``): ``find`` is one indexed select by the token's hash, ``add`` one
upsert, ``remove`` one delete; opened, pooled and mapped like every side store (``store.postgres.side``): its own
small pool; a database that cannot be reached raises ``StoreError`` with a readable reason.
"""

from __future__ import annotations

from typing import Any

from store.postgres import SideStore
from store.shares.api import ShareLink

COLUMNS = "token_sha256, share_id, conversation_id, owner, created_ts"


def _link(row: Any) -> ShareLink:
    return ShareLink(str(row[0]), str(row[1]), str(row[2]), None if row[3] is None else str(row[3]), str(row[4]))


class PgShares(SideStore):
    POOL, POOL_SIZE = "shares", 2

    def find(self, token_sha256: str) -> ShareLink | None:
        row = self._run(
            lambda c: c.execute(
                f"SELECT {COLUMNS} FROM share_links WHERE token_sha256 = %s", (token_sha256,)
            ).fetchone()
        )
        return None if row is None else _link(row)

    def add(self, link: ShareLink) -> None:
        self._run(
            lambda c: c.execute(
                f"INSERT INTO share_links ({COLUMNS}) VALUES (%s, %s, %s, %s, %s) ON CONFLICT (token_sha256) DO UPDATE "
                "SET share_id = EXCLUDED.share_id, conversation_id = EXCLUDED.conversation_id, "
                "owner = EXCLUDED.owner, created_ts = EXCLUDED.created_ts",
                (link.token_sha256, link.share_id, link.conversation_id, link.owner, link.created_ts),
            )
        )

    def remove(self, share_id: str) -> bool:
        cursor = self._run(lambda c: c.execute("DELETE FROM share_links WHERE share_id = %s", (share_id,)))
        return bool(cursor.rowcount)

    def links(self) -> list[ShareLink]:
        rows = self._run(lambda c: c.execute(f"SELECT {COLUMNS} FROM share_links ORDER BY created_ts").fetchall())
        return [_link(r) for r in rows]
