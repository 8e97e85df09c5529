"""Child process for the store's crash test: ten conversations stream into the real TinyDB store until it is killed.

``python -m tests.support.stream_child <data-dir>``: opens the store (compacting logs from ``COMPACT_FROM`` bytes,
small, so that compactions are frequent and a kill lands in some), prints ``READY``, then appends, one event per
conversation per step, whole turns (``tests.support.ledger_builders.answer_events``: question, answer of 40
chunks, end) to conversations ``s0``..``s9``, each going on after the turns already stored. Every 20 steps it
calls ``flush_sync`` and, once that says everything is on disk, prints ``DURABLE s0:<seq> s1:<seq> ...``: the last
seq of each conversation the store has reported durable. It never stops by itself: the test kills it (``kill -9``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator

from ledger.events.core import AnyEvent, Created, Submitted
from store.tinydb import logfile
from store.tinydb.store import Store
from tests.support.ledger_builders import answer_events, ts

COMPACT_FROM = 8 * 1024
CONVERSATIONS = [f"s{n}" for n in range(10)]


def turns(store: Store, cid: str) -> Iterator[AnyEvent]:
    """The events of whole turns, after those the conversation holds (a new one starts with ``created``)."""
    held = store.events(cid) if cid in store.conversation_ids() else ()
    if not held:
        yield Created(conversation_id=cid, ts=ts(0), title=f"stream {cid}")
    turn = sum(isinstance(e, Submitted) for e in held)
    while True:
        turn += 1
        yield from answer_events(cid, turn, 40, start_ms=turn * 10_000)


def main(folder: str) -> None:
    logfile.COMPACT_FROM = COMPACT_FROM
    store = Store.open(folder)
    streams = {cid: turns(store, cid) for cid in CONVERSATIONS}
    last = {cid: 0 for cid in CONVERSATIONS}
    print("READY", flush=True)
    step = 0
    while True:
        for cid, stream in streams.items():
            last[cid] = store.append(next(stream)).seq
        step += 1
        if step % 20 == 0:
            asked = dict(last)
            if store.flush_sync():
                print("DURABLE " + " ".join(f"{cid}:{seq}" for cid, seq in asked.items()), flush=True)
        time.sleep(0.001)  # the pace of ten streams, not a wait for anything


if __name__ == "__main__":
    main(sys.argv[1])
