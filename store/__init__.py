"""Where the ledger is kept: the event store's contract (``store.api``), the TinyDB and PostgreSQL back ends side by
side (neither imports the other), the blob, grant, preset and account stores beside the ledger, the writer thread
and the store's health.

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
    "memory",
    "migrate",
    "postgres",
    "presets",
    "tinydb",
    "tokens",
    "writer",
]
