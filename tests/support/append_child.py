"""Child process for the two-process store test: opens a store, waits for ``go`` on stdin, then appends.

Prints ``READY`` once its store is open (or ``REFUSED <reason>`` when the store refuses a second process), then,
after ``go``, appends ``count`` renames titled ``<name>-<i>`` to conversation ``shared`` in bursts of five, each
burst flushed; an append refused because another instance holds the conversation is tried again. Prints
``DONE <count>`` after closing the store.
"""

from __future__ import annotations

import sys
import time

from ledger.errors import ConversationBusyError, DataDirInUseError
from ledger.events.core import Renamed
from store.api import EventStore
from store.postgres.store import PgStore
from store.tinydb.store import Store


def main(kind: str, location: str, name: str, count: int) -> None:
    store: EventStore
    try:
        store = PgStore.open(location, release_after=0.002) if kind == "postgres" else Store.open(location)
    except DataDirInUseError as exc:
        print(f"REFUSED {exc}", flush=True)
        return
    print("READY", flush=True)
    sys.stdin.readline()
    for i in range(count):
        while True:
            try:
                store.append(Renamed(conversation_id="shared", ts="t", title=f"{name}-{i}"))
                break
            except ConversationBusyError:
                time.sleep(0.001)  # the other process is writing: try again (the retry loop of a busy writer)
        if i % 5 == 4:
            store.flush_sync()
            time.sleep(0.003)  # leave the conversation quiet for a moment, so that the other process gets a turn
    assert store.close() == 0
    print(f"DONE {count}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
