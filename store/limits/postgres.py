"""Spend limits in the PostgreSQL ``spend_limits`` table (``store/postgres/migrations/0009_spend_limits.sql``): every
instance on one database reads the same limits, at every check (no cache).

Guarantees (beyond ``store.limits.api.LimitStore``): ``put`` is one upsert, ``remove`` one delete; opened, pooled
and mapped like every side store (``store.postgres.side``); a database that cannot be reached raises
``StoreError`` with a readable reason.
"""

from __future__ import annotations

from store.limits.api import SpendLimit
from store.postgres import SideStore


class PgLimits(SideStore):
    POOL, POOL_SIZE = "limits", 1

    def limits(self) -> dict[str, SpendLimit]:
        rows = self._run(
            lambda c: c.execute("SELECT key, day_usd, month_usd, day_tokens, month_tokens FROM spend_limits").fetchall()
        )
        names = ("day_usd", "month_usd", "day_tokens", "month_tokens")
        return {str(r[0]): SpendLimit.from_dict(dict(zip(names, r[1:], strict=True))) for r in rows}

    def put(self, key: str, limit: SpendLimit) -> None:
        values = (key, limit.day_usd, limit.month_usd, limit.day_tokens, limit.month_tokens)
        self._run(
            lambda c: c.execute(
                "INSERT INTO spend_limits (key, day_usd, month_usd, day_tokens, month_tokens) "
                "VALUES (%s, %s, %s, %s, %s) "
                "ON CONFLICT (key) DO UPDATE SET day_usd = EXCLUDED.day_usd, month_usd = EXCLUDED.month_usd, "
                "day_tokens = EXCLUDED.day_tokens, month_tokens = EXCLUDED.month_tokens",
                values,
            )
        )

    def remove(self, key: str) -> bool:
        cursor = self._run(lambda c: c.execute("DELETE FROM spend_limits WHERE key = %s", (key,)))
        return bool(cursor.rowcount)
