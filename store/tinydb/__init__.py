"""The embedded back end: the ledger in TinyDB files in the data folder, one file per conversation plus an index, a
writer thread that batches and fsyncs, a lock file so two processes never write one folder, and a reserve so a
full disk is reported, never a torn file.

Guarantees (``store.api.EventStore``): what was appended comes back in seq order after a restart; a corrupt file is
set aside with a sentence, never read half; saving that fails is reported (``store.health``) and retried; with a
``Bounding``, a file's texts over ``ledger.bounds.TEXT_BOUND`` are moved into blobs before it is parsed
(``store.tinydb.bounding``).
"""

from __future__ import annotations

from store.tinydb.bounding import OVERSIZE_FILE, Bounded, Bounding, bound_file
from store.tinydb.opening import read_folder
from store.tinydb.storage import fsync_dir
from store.tinydb.store import Store

__all__ = ["OVERSIZE_FILE", "Bounded", "Bounding", "Store", "bound_file", "fsync_dir", "read_folder"]
