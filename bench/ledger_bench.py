"""Ledger store and replay benchmark (not a test): prints numbers and ratios.

    .venv/bin/python -m bench.ledger_bench

Measures, on real files in a temp dir:
- 100 answers x 200 chunks (20,200 events) appended and persisted, in one conversation and spread over 10,
  each answer made durable at its end (as the terminal events of a real answer are): events/s, total store
  (writer) time, worst single write;
- whether a flush costs in proportion to its own conversation or to all history;
- replay time for 100,000 events; bytes on disk per chunk event.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from ledger.reducer import replay
from ledger.store import Store
from tests.support.ledger_builders import answer_events, conversation_events


def persist_answers(conversations: int, answers: int, chunks: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(tmp)
        total = 0
        started = time.perf_counter()
        for n in range(answers):
            cid = f"c{n % conversations}"
            for event in answer_events(cid, n + 1, chunks, start_ms=n * 10_000):
                store.append(event)
                total += 1
            assert store.flush_sync(), "a write failed: the figures would not mean anything"
        wall = time.perf_counter() - started
        store.close()
        size = sum(p.stat().st_size for p in Path(tmp).glob("conv-*.json"))
        return {
            "events": total,
            "wall_s": wall,
            "events_per_s": total / wall,
            "store_s": store.stats.write_seconds,
            "worst_write_ms": store.stats.worst_write_ms,
            "bytes": size,
        }


def flush_cost(background_events: int, target: str = "small") -> float:
    """Median ms to persist one small answer into `target`, with `background_events` in conversation "big"."""
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(tmp)
        if background_events:
            answers = background_events // 202
            for event in conversation_events("big", answers, 200):
                store.append(event)
            assert store.flush_sync(), "a write failed: the figures would not mean anything"
        times = []
        for n in range(40):
            before = store.stats.write_seconds
            for event in answer_events(target, 10_000 + n, 20):
                store.append(event)
            assert store.flush_sync(), "a write failed: the figures would not mean anything"
            times.append((store.stats.write_seconds - before) * 1000)
        store.close()
        return statistics.median(times)


def replay_seconds(n_events: int) -> tuple[int, float]:
    events = []
    for c in range(10):
        events += conversation_events(f"c{c}", answers=n_events // 10 // 202, chunks=200)
    started = time.perf_counter()
    replay(events)
    return len(events), time.perf_counter() - started


def main() -> None:
    print("ledger store benchmark (real TinyDB files, one writer thread, atomic replace per write)")
    for convs in (1, 10):
        r = persist_answers(convs, 100, 200)
        print(
            f"  100 answers x 200 chunks in {convs:>2} conversation(s): {r['events']:,.0f} events, "
            f"{r['events_per_s']:,.0f} events/s appended+persisted, total store time {r['store_s']:.2f} s "
            f"(target < 1.5 s), worst single write {r['worst_write_ms']:.1f} ms, "
            f"{r['bytes'] / (100 * 200):.1f} bytes on disk per chunk event"
        )
    small, loaded, big = flush_cost(0), flush_cost(100_000), flush_cost(100_000, target="big")
    print(
        f"  flush of a 20-chunk answer into a small conversation: {small:.2f} ms alone, {loaded:.2f} ms with 100,000 "
        f"events in another conversation (ratio {loaded / small:.2f}); into that 100,000-event conversation "
        f"itself: {big:.2f} ms. The cost follows the conversation written, not all history."
    )
    n, secs = replay_seconds(100_000)
    print(f"  replay of {n:,} events: {secs:.2f} s ({n / secs:,.0f} events/s; target < 1 s)")


if __name__ == "__main__":
    main()
