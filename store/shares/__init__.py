"""Share links' lookup (``/s/<token>``): the token's sha256 to the conversation and the link's id, in memory, in a
JSON file, or a PostgreSQL table; the ledger records each link's life, the store answers whether one holds now.
"""

from __future__ import annotations

from store.shares.api import MemoryShares, ShareLink, ShareStore, token_hash
from store.shares.file import FileShares
from store.shares.postgres import PgShares

__all__ = ["FileShares", "MemoryShares", "PgShares", "ShareLink", "ShareStore", "token_hash"]
