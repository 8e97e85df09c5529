"""Server grants in the PostgreSQL ``approval_grants`` table (``store/postgres/migrations/0005_approval_grants.sql``):
every instance on one database reads the same grants, at every call (no cache).

Guarantees (beyond ``store.grants.api.GrantStore``): ``grant`` is one upsert, ``revoke`` one delete; opened, pooled
and mapped like every side store (``store.postgres.side``): its own small pool; a database that cannot be reached
raises ``StoreError`` with a readable reason.
"""

from __future__ import annotations

from store.grants.api import Grant
from store.postgres import SideStore


class PgGrants(SideStore):
    POOL, POOL_SIZE = "grants", 1

    def grants(self) -> dict[str, Grant]:
        rows = self._run(lambda c: c.execute("SELECT key, grant_hash, granted_ts FROM approval_grants").fetchall())
        return {str(r[0]): Grant(key=str(r[0]), grant_hash=str(r[1]), granted_ts=str(r[2])) for r in rows}

    def grant(self, grant: Grant) -> None:
        self._run(
            lambda c: c.execute(
                "INSERT INTO approval_grants (key, grant_hash, granted_ts) VALUES (%s, %s, %s) "
                "ON CONFLICT (key) DO UPDATE SET grant_hash = EXCLUDED.grant_hash, granted_ts = EXCLUDED.granted_ts",
                (grant.key, grant.grant_hash, grant.granted_ts),
            )
        )

    def revoke(self, key: str) -> bool:
        cursor = self._run(lambda c: c.execute("DELETE FROM approval_grants WHERE key = %s", (key,)))
        return bool(cursor.rowcount)
