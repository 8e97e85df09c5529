"""Remote tool servers and sealed tokens in the PostgreSQL ``remote_servers`` and ``oauth_tokens`` tables
(``store/postgres/migrations/0011_remote_servers.sql``): every instance on one database reads the same, at every
call (no cache).

Guarantees (beyond ``store.tokens.api.RemoteStore``): ``put`` and ``seal`` are one upsert each, ``forget`` one
delete, ``remove`` one transaction (the server and its sealed tokens); opened, pooled and mapped like every side
store (``store.postgres.side``); ``oauth_tokens`` holds only ciphertext.
"""

from __future__ import annotations

from typing import Any

from store.postgres import SideStore
from store.tokens.api import RemoteServer, token_key


class PgRemote(SideStore):
    POOL, POOL_SIZE = "remote", 1

    def servers(self) -> list[RemoteServer]:
        rows = self._run(
            lambda c: c.execute("SELECT owner, name, url, enabled, tools, added_ts FROM remote_servers").fetchall()
        )
        return [
            RemoteServer(owner=str(r[0]) or None, name=str(r[1]), url=str(r[2]), enabled=bool(r[3]), tools=str(r[4]),
                         added_ts=str(r[5]))
            for r in rows
        ]  # fmt: skip

    def put(self, server: RemoteServer) -> None:
        self._run(
            lambda c: c.execute(
                "INSERT INTO remote_servers (owner, name, url, enabled, tools, added_ts) "
                "VALUES (%s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (owner, name) DO UPDATE SET url = EXCLUDED.url, enabled = EXCLUDED.enabled, "
                "tools = EXCLUDED.tools",
                (server.owner or "", server.name, server.url, server.enabled, server.tools, server.added_ts),
            )
        )

    def remove(self, owner: str | None, name: str) -> bool:
        def work(c: Any) -> bool:
            with c.transaction():
                c.execute(
                    "DELETE FROM oauth_tokens WHERE server = %s AND (%s = '' OR key = %s)",
                    (name, owner or "", token_key(owner, name)),
                )
                cursor = c.execute("DELETE FROM remote_servers WHERE owner = %s AND name = %s", (owner or "", name))
                return bool(cursor.rowcount)

        return self._run(work)

    def sealed(self, key: str) -> bytes | None:
        row = self._run(lambda c: c.execute("SELECT sealed FROM oauth_tokens WHERE key = %s", (key,)).fetchone())
        return bytes(row[0]) if row and isinstance(row[0], bytes | memoryview) else None

    def seal(self, key: str, value: bytes) -> None:
        server = key.partition("|")[2]
        self._run(
            lambda c: c.execute(
                "INSERT INTO oauth_tokens (key, server, sealed) VALUES (%s, %s, %s) "
                "ON CONFLICT (key) DO UPDATE SET sealed = EXCLUDED.sealed",
                (key, server, value),
            )
        )

    def forget(self, key: str) -> bool:
        cursor = self._run(lambda c: c.execute("DELETE FROM oauth_tokens WHERE key = %s", (key,)))
        return bool(cursor.rowcount)
