"""``migrate``: copying a TinyDB data folder into PostgreSQL, then checking that every conversation reads back the
same (``copy_folder``, its ``CopyReport``); running it again copies nothing twice.
"""

from __future__ import annotations

from store.migrate.copying import copy_folder

__all__ = ["copy_folder"]
