"""The program that bounds one TinyDB conversation file in a process of its own:
``python -m store.blobs.rewrite FILE BLOB_FOLDER`` (run by ``store.blobs.bounding.FolderBounding.rewrite``).

Guarantees: it lowers its own priority first (``os.nice(10)``: the server it works for keeps its CPU), then runs
``store.tinydb.bound_file`` (atomic: the old file or the new one, whatever happens) with the blob folder's ``put``,
then prints what was done as one JSON line (``{"moved", "cut", "aside"}``) and exits 0; a failure exits non-zero
with its traceback on stderr, and changes nothing the next attempt cannot redo.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from store.blobs.folder import FolderBlobs
from store.blobs.text import TEXT_TYPE
from store.tinydb import bound_file


def main(argv: list[str]) -> int:
    """Bound the file ``argv[0]`` into the blob folder ``argv[1]``; print what was done as one JSON line."""
    os.nice(10)  # background work: the server's event loop goes first on a busy machine
    path, root = Path(argv[0]), Path(argv[1])
    bounded = bound_file(path, lambda data: FolderBlobs(root).put(data, TEXT_TYPE))
    print(json.dumps(bounded.as_doc()), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
