"""Server-wide approval grants ("always allow this tool on this server"): in memory, in a JSON file, or a PostgreSQL
table; the ledger records each grant and revoke, the store answers whether one holds now.
"""

from __future__ import annotations

from store.grants.api import Grant, GrantStore, MemoryGrants, server_grant_key, split_key
from store.grants.file import FileGrants
from store.grants.postgres import PgGrants

__all__ = ["FileGrants", "Grant", "GrantStore", "MemoryGrants", "PgGrants", "server_grant_key", "split_key"]
