"""Accounts and sessions in PostgreSQL (``store/postgres/migrations/0007_accounts.sql``), and one-time password
links (``0008_password_resets.sql``): every instance on one database reads the same people, sessions and links, so a
session made on one works on the others.

Guarantees (beyond ``store.accounts.api.AccountStore``): each write is one statement (an upsert, or one update
for ``end_sessions``; ``take_reset`` is one ``DELETE … RETURNING``, so of two callers at once only one gets the
link); opened, pooled and mapped like every side store (``store.postgres.side``): its own small
pool; a database that cannot be reached raises ``StoreError`` with a readable reason.
"""

from __future__ import annotations

from store.accounts.api import Account, ResetRecord, SessionRecord
from store.postgres import SideStore


class PgAccounts(SideStore):
    POOL, POOL_SIZE = "accounts", 2

    def accounts(self) -> dict[str, Account]:
        rows = self._run(
            lambda c: c.execute(
                "SELECT name, password_hash, admin, disabled, created_ts, display FROM accounts"
            ).fetchall()
        )
        return {str(r[0]): Account(str(r[0]), str(r[1]), bool(r[2]), bool(r[3]), str(r[4]), str(r[5])) for r in rows}

    def put_account(self, account: Account) -> None:
        self._run(
            lambda c: c.execute(
                "INSERT INTO accounts (name, password_hash, admin, disabled, created_ts, display) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (name) DO UPDATE SET password_hash = "
                "EXCLUDED.password_hash, admin = EXCLUDED.admin, disabled = EXCLUDED.disabled, "
                "display = EXCLUDED.display",
                (
                    account.name,
                    account.password_hash,
                    account.admin,
                    account.disabled,
                    account.created_ts,
                    account.display,
                ),  # fmt: skip
            )
        )

    def session(self, key: str) -> SessionRecord | None:
        row = self._run(
            lambda c: c.execute(
                "SELECT key, name, created_ts, seen_ts, ended FROM sessions WHERE key = %s", (key,)
            ).fetchone()
        )
        return None if row is None else SessionRecord(str(row[0]), str(row[1]), str(row[2]), str(row[3]), bool(row[4]))

    def put_session(self, record: SessionRecord) -> None:
        self._run(
            lambda c: c.execute(
                "INSERT INTO sessions (key, name, created_ts, seen_ts, ended) VALUES (%s, %s, %s, %s, %s) "
                "ON CONFLICT (key) DO UPDATE SET seen_ts = EXCLUDED.seen_ts, ended = sessions.ended OR EXCLUDED.ended",
                (record.key, record.name, record.created_ts, record.seen_ts, record.ended),
            )
        )

    def touch_session(self, key: str, seen_ts: str) -> None:
        self._run(lambda c: c.execute("UPDATE sessions SET seen_ts = %s WHERE key = %s AND NOT ended", (seen_ts, key)))

    def end_sessions(self, name: str) -> int:
        cursor = self._run(
            lambda c: c.execute("UPDATE sessions SET ended = true WHERE name = %s AND NOT ended", (name,))
        )
        return int(cursor.rowcount)

    def put_reset(self, record: ResetRecord) -> None:
        self._run(
            lambda c: c.execute(
                "INSERT INTO password_resets (name, key, expires_ts) VALUES (%s, %s, %s) "
                "ON CONFLICT (name) DO UPDATE SET key = EXCLUDED.key, expires_ts = EXCLUDED.expires_ts",
                (record.name, record.key, record.expires_ts),
            )
        )

    def reset(self, key: str) -> ResetRecord | None:
        row = self._run(
            lambda c: c.execute("SELECT key, name, expires_ts FROM password_resets WHERE key = %s", (key,)).fetchone()
        )
        return None if row is None else ResetRecord(str(row[0]), str(row[1]), str(row[2]))

    def take_reset(self, key: str) -> ResetRecord | None:
        row = self._run(
            lambda c: c.execute(
                "DELETE FROM password_resets WHERE key = %s RETURNING key, name, expires_ts", (key,)
            ).fetchone()
        )
        return None if row is None else ResetRecord(str(row[0]), str(row[1]), str(row[2]))
