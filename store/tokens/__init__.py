"""Remote tool servers people add at run time, and their sealed OAuth tokens: in memory, in JSON files beside the
TinyDB ledger, or two PostgreSQL tables. Never in the ledger; tokens only as ciphertext (``engine.tools.vault``).
"""

from __future__ import annotations

from store.tokens.api import MemoryRemote, RemoteServer, RemoteStore, token_key
from store.tokens.file import FileRemote
from store.tokens.postgres import PgRemote

__all__ = ["FileRemote", "MemoryRemote", "PgRemote", "RemoteServer", "RemoteStore", "token_key"]
