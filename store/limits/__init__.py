"""Spend limits beside the accounts: in memory, in a JSON file beside the TinyDB ledger, or a PostgreSQL table
beside the PostgreSQL ledger (``engine.spend`` reads them at every check; the ledger never holds them)."""

from __future__ import annotations

from store.limits.api import DEFAULT, LimitStore, MemoryLimits, SpendLimit
from store.limits.file import FileLimits
from store.limits.postgres import PgLimits

__all__ = ["DEFAULT", "FileLimits", "LimitStore", "MemoryLimits", "PgLimits", "SpendLimit"]
