"""Where the ledger is kept: the event store's contract (``store.api``), the TinyDB and PostgreSQL back ends side by
side (neither imports the other), the blob, grant, preset, account and share-link stores beside the ledger, the
writer thread and the store's health.

Guarantees: a back end returns what was appended, in seq order, and says when saving fails (``store.health``);
``__all__`` names its modules and sub-packages, each sub-package's own face names what others may import.
"""

__all__ = [
    "accounts",
    "api",
    "blobs",
    "event_log",
    "grants",
    "health",
    "limits",
    "memory",
    "migrate",
    "postgres",
    "presets",
    "shares",
    "tinydb",
    "tokens",
    "writer",
]
