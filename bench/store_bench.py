"""The embedded store's cost per batch and at opening, append-only log against the whole-file rewrite before it
(issue 39), in one run, on real files in temp dirs (benchmark, not a test):

    .venv/bin/python -m bench.store_bench [--quick]

- flush of one batch (a 20-chunk answer, 24 events, made durable) into a fresh conversation and into one of
  100,000 events, median of 40: the store's write time for that conversation (``StoreStats``, fsyncs included,
  the index apart). Target: into 100,000 events <= 1.5x into a fresh one (the rewrite before: ~20x).
- opening a 100,000-event conversation (``Store.open`` and reading it to events, best of 5, taking turns), the
  whole file before against the log at its largest (a compacted file of half the events and a log of the other
  half, the moment before the writer compacts it) and just after a compaction. Target: no slower than before.
- one compaction of the 100,000-event conversation (the writer does it after a batch, once the log has grown to the
  size of its file: each doubling of the conversation).
``WholeFileStore`` is the code before, kept here as the baseline: each batch inserted through TinyDB into an
``AtomicJSONStorage`` that rewrites the conversation's whole file (temp file, fsync, rename). ``--quick``: 40,000
events instead of 100,000. The rows go to ``bench.report`` (``bench.result``).
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tinydb import TinyDB

from bench import result
from ledger.events import AnyEvent
from store.tinydb import logfile
from store.tinydb.documents import to_documents
from store.tinydb.files import FolderFiles
from store.tinydb.logfile import ConversationLog
from store.tinydb.storage import AtomicJSONStorage
from store.tinydb.store import Store
from tests.support.ledger_builders import answer_events, conversation_events

BENCH = "bench.store_bench"
ANSWER = 200  # chunks per answer of the big conversation: 205 events each, one batch each


class WholeFiles(FolderFiles):
    """The writing before issue 39: TinyDB's insert into a storage that rewrites the whole file per batch."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._dbs: dict[str, TinyDB] = {}

    def write(self, cid: str, events: Sequence[AnyEvent]) -> None:
        self.take_lock()
        db = self._dbs.get(cid)
        if db is None:
            db = self._dbs[cid] = TinyDB(self.path(cid), storage=AtomicJSONStorage)
        db.table("events").insert_multiple(to_documents(events))


class WholeFileStore(Store):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._files = self._backing = WholeFiles(self.data_dir, self._log.report)


def stream(store: Store, cid: str, answers: int, first_turn: int = 1) -> None:
    """``answers`` whole answers of ``ANSWER`` chunks, each made durable at its end (a batch each)."""
    if first_turn == 1:
        store.append(conversation_events(cid, 0, 0)[0])
    for turn in range(first_turn, first_turn + answers):
        for event in answer_events(cid, turn, ANSWER, start_ms=turn * 60_000):
            store.append(event)
        assert store.flush_sync(), "a write failed: the figures would not mean anything"


def flush_ms(store: Store, cid: str, turns: int = 40, first_turn: int = 10_000) -> float:
    """Median write time of one 20-chunk answer's batch into ``cid``."""
    times = []
    for n in range(turns):
        before = store.stats.write_seconds
        for event in answer_events(cid, first_turn + n, 20, start_ms=(first_turn + n) * 60_000):
            store.append(event)
        assert store.flush_sync(), "a write failed: the figures would not mean anything"
        times.append((store.stats.write_seconds - before) * 1000)
    return statistics.median(times)


def open_ms(folders: dict[str, Path], cid: str, rounds: int = 5) -> tuple[dict[str, float], int]:
    """Best of ``rounds``, the folders taking turns (the machine's load then weighs on each alike): opening the store
    and reading the conversation to events; and how many events it has."""
    best, count = dict.fromkeys(folders, float("inf")), 0
    for _ in range(rounds):
        for name, folder in folders.items():
            started = time.perf_counter()
            store = Store.open(folder, read_only=True)
            count = len(store.events(cid))
            best[name] = min(best[name], (time.perf_counter() - started) * 1000)
            assert store.problems == [], store.problems
    return best, count


def measure(kind: type[Store], answers: int, tmp: Path) -> dict[str, float]:
    folder = tmp / kind.__name__
    store = kind.open(folder)
    fresh = flush_ms(store, "fresh")
    stream(store, "big", answers)
    big = flush_ms(store, "big")
    assert store.close() == 0
    return {"fresh": fresh, "big": big, "bytes": sum(p.stat().st_size for p in folder.glob("conv-big.*"))}


def log_at_its_largest(answers: int, tmp: Path) -> Path:
    """A folder whose big conversation is a compacted file of half its events and a log of the other half."""
    folder = tmp / "largest"
    store = Store.open(folder)
    stream(store, "big", answers // 2)
    assert store.close() == 0
    ConversationLog(folder / "conv-big.json").compact()
    logfile.COMPACT_FROM, before = 1 << 40, logfile.COMPACT_FROM
    try:
        store = Store.open(folder)
        store.events("big")
        stream(store, "big", answers - answers // 2, first_turn=answers // 2 + 1)
        assert store.close() == 0
    finally:
        logfile.COMPACT_FROM = before
    return folder


def main() -> None:
    answers = (40_000 if "--quick" in sys.argv else 100_000) // (ANSWER + 5)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        old = measure(WholeFileStore, answers, base)
        new = measure(Store, answers, base)
        largest = log_at_its_largest(answers, base)
        log_bytes, file_bytes = (largest / "conv-big.log").stat().st_size, (largest / "conv-big.json").stat().st_size
        compacted = base / "compacted"
        shutil.copytree(largest, compacted)
        (compacted / ".lock").unlink(missing_ok=True)
        started = time.perf_counter()
        ConversationLog(compacted / "conv-big.json").compact()
        compact_ms = (time.perf_counter() - started) * 1000
        folders = {"before": base / "WholeFileStore", "largest": largest, "compacted": compacted}
        opened, events = open_ms(folders, "big")
        before_ms, largest_ms, compacted_ms = opened["before"], opened["largest"], opened["compacted"]
    n = f"{events:,}"
    print(f"store bench: a conversation of {n} events ({answers} answers of {ANSWER} chunks, a batch each)")
    for name, r in (("whole-file rewrite (before)", old), ("append-only log", new)):
        print(
            f"  {name}: flush of a 20-chunk answer into a fresh conversation {r['fresh']:.2f} ms, into the {n}-event "
            f"one {r['big']:.2f} ms ({r['big'] / r['fresh']:.1f}x; target <= 1.5x); its files {r['bytes'] / 1e6:.1f} MB"
        )
    print(
        f"  opening the {n}-event conversation: whole file (before) {before_ms:.0f} ms; compacted file "
        f"{file_bytes / 1e6:.1f} MB + log {log_bytes / 1e6:.1f} MB (its largest) {largest_ms:.0f} ms "
        f"({largest_ms / before_ms:.2f}x); just compacted {compacted_ms:.0f} ms ({compacted_ms / before_ms:.2f}x)"
    )
    print(f"  one compaction of it (the writer, after a batch, once per doubling): {compact_ms:.0f} ms")
    result.row(
        BENCH,
        f"flush of a 20-chunk answer into a {n}-event conversation, append-only log (median of 40)",
        f"{new['big']:.2f} ms ({new['big'] / new['fresh']:.2f}x a fresh conversation's {new['fresh']:.2f} ms)",
        f"whole-file rewrite before: {old['big']:.2f} ms ({old['big'] / old['fresh']:.1f}x a fresh one's "
        f"{old['fresh']:.2f} ms)",
    )
    result.row(
        BENCH,
        f"opening a {n}-event conversation with its log at its largest (half the events), best of 5 taking turns",
        f"{largest_ms:.0f} ms; just compacted {compacted_ms:.0f} ms",
        f"whole file before: {before_ms:.0f} ms ({largest_ms / before_ms:.2f}x, {compacted_ms / before_ms:.2f}x)",
    )
    result.row(
        BENCH,
        f"one compaction of the {n}-event conversation (writer thread, once per doubling)",
        f"{compact_ms:.0f} ms",
    )
    result.save()


if __name__ == "__main__":
    main()
