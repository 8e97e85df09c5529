"""The ledger on PostgreSQL, one and two instances (not a test): prints events/s appended and made durable.

    .venv/bin/python -m bench.pg_bench

Starts a throwaway PostgreSQL cluster (as the tests do), then, for 1 and 2 instances (each a separate process
with its own ``PgStore``), runs 50 concurrent streams in all (split between the instances): each stream is a
conversation that gets created, a question, and an answer of ``CHUNKS`` chunks appended in turn with the other
streams' chunks, as the engine appends them; the figure is events appended and durable per second of wall time,
from the first append to the last instance's flush. The TinyDB store (one instance only) is run the same way
for comparison.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ledger.events import AnyEvent
from ledger.pg_store import PgStore
from ledger.store import Store
from ledger.store_api import EventStore
from tests.support.ledger_builders import conversation_events
from tests.support.postgres import PostgresCluster

STREAMS = 50
CHUNKS = 400
ROOT = Path(__file__).resolve().parent.parent


def worker(kind: str, location: str, first: int, count: int) -> None:
    """One instance: ``count`` streams, their chunks interleaved; prints {events, seconds} once durable."""
    store: EventStore = PgStore.open(location) if kind == "postgres" else Store.open(location)
    streams = [conversation_events(f"s{first + n:03d}", answers=1, chunks=CHUNKS) for n in range(count)]
    order: list[AnyEvent] = [e for step in zip(*streams, strict=True) for e in step]
    print("READY", flush=True)
    sys.stdin.readline()
    started = time.perf_counter()
    for event in order:
        store.append(event)
    assert store.flush_sync(timeout=120), "a write failed: the figure would not mean anything"
    seconds = time.perf_counter() - started
    store.close()
    print(json.dumps({"events": len(order), "seconds": seconds}), flush=True)


def run(kind: str, location: str, instances: int) -> float:
    """Events/s over all instances, from the go signal to the last instance durable."""
    share = STREAMS // instances
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "bench.pg_bench", "worker", kind, location, str(n * share), str(share)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for n in range(instances)
    ]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "READY"
    started = time.perf_counter()
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    results = [json.loads(proc.communicate(timeout=300)[0].strip().splitlines()[-1]) for proc in procs]
    wall = time.perf_counter() - started
    return float(sum(r["events"] for r in results) / wall)


def main() -> None:
    cluster = PostgresCluster().start()
    try:
        events = STREAMS * (CHUNKS + 6)
        print(f"{STREAMS} concurrent streams of {CHUNKS} chunks ({events} events), appended and durable")
        for instances in (1, 2):
            rates = [run("postgres", cluster.new_database(), instances) for _ in range(3)]
            print(f"  PostgreSQL, {instances} instance(s): {statistics.median(rates):,.0f} events/s (median of 3)")
        with tempfile.TemporaryDirectory() as tmp:
            rates = [run("tinydb", str(Path(tmp) / f"d{n}"), 1) for n in range(3)]
            print(f"  TinyDB, 1 instance: {statistics.median(rates):,.0f} events/s (median of 3)")
    finally:
        cluster.stop()


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker"]:
        worker(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    else:
        main()
