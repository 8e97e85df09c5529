"""Remote tool servers and sealed tokens in the PostgreSQL ``remote_servers`` and ``oauth_tokens`` tables
(``store/postgres/migrations/0011_remote_servers.sql``): every instance on one database reads the same, at every
call (no cache).

Guarantees (beyond ``store.tokens.api.RemoteStore``): ``seal`` is one upsert, ``forget`` one delete, ``put`` one
transaction (the upsert and the stamp), ``remove`` one transaction (the server, its sealed tokens and the stamp);
``stamp`` is one read of the one row of ``remote_servers_stamp`` (migration 0012), grown by every put and remove;
opened, pooled and mapped like every side store (``store.postgres.side``); ``oauth_tokens`` holds only ciphertext.
"""

from __future__ import annotations

from typing import Any

from store.postgres import SideStore
from store.tokens.api import RemoteServer, token_key

_COLUMNS = "owner, name, url, enabled, tools, added_ts, added_by, changed_by, changed_ts"
_BUMP = "UPDATE remote_servers_stamp SET n = n + 1"


class PgRemote(SideStore):
    POOL, POOL_SIZE = "remote", 1

    def servers(self) -> list[RemoteServer]:
        rows = self._run(lambda c: c.execute(f"SELECT {_COLUMNS} FROM remote_servers").fetchall())
        return [
            RemoteServer(owner=str(r[0]) or None, name=str(r[1]), url=str(r[2]), enabled=bool(r[3]), tools=str(r[4]),
                         added_ts=str(r[5]), added_by=str(r[6]) or None, changed_by=str(r[7]) or None,
                         changed_ts=str(r[8]))
            for r in rows
        ]  # fmt: skip

    def stamp(self) -> str:
        row = self._run(lambda c: c.execute("SELECT n FROM remote_servers_stamp").fetchone())
        return str(row[0]) if row else ""

    def put(self, server: RemoteServer) -> None:
        values = (server.owner or "", server.name, server.url, server.enabled, server.tools, server.added_ts,
                  server.added_by or "", server.changed_by or "", server.changed_ts)  # fmt: skip

        def work(c: Any) -> None:
            with c.transaction():  # the stamp grows with the change, seen by others together with it
                c.execute(
                    f"INSERT INTO remote_servers ({_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) "
                    "ON CONFLICT (owner, name) DO UPDATE SET url = EXCLUDED.url, enabled = EXCLUDED.enabled, "
                    "tools = EXCLUDED.tools, changed_by = EXCLUDED.changed_by, changed_ts = EXCLUDED.changed_ts",
                    values,
                )
                c.execute(_BUMP)

        self._run(work)

    def remove(self, owner: str | None, name: str) -> bool:
        def work(c: Any) -> bool:
            with c.transaction():
                c.execute(
                    "DELETE FROM oauth_tokens WHERE server = %s AND (%s = '' OR key = %s)",
                    (name, owner or "", token_key(owner, name)),
                )
                cursor = c.execute("DELETE FROM remote_servers WHERE owner = %s AND name = %s", (owner or "", name))
                c.execute(_BUMP)
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
