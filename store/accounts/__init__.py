"""Team mode's accounts, sessions and one-time password links: in memory, in a JSON file beside the TinyDB ledger,
or PostgreSQL tables beside the PostgreSQL ledger (``engine.people`` checks passwords, sessions and links over
them)."""

from __future__ import annotations

from store.accounts.api import Account, AccountStore, MemoryAccounts, ResetRecord, SessionRecord
from store.accounts.file import FileAccounts
from store.accounts.postgres import PgAccounts

__all__ = ["Account", "AccountStore", "FileAccounts", "MemoryAccounts", "PgAccounts", "ResetRecord", "SessionRecord"]
