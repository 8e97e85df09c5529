"""What the spend-limit check before a model request costs a person with 1 conversation and with 200, cold (a
fresh process: nothing folded, the chats read from their files) and warm (asked again: the kept folds), in one
run (not a test).

    .venv/bin/python -m bench.spend_bench [--quick]

A real TinyDB data folder holds ben's chats (``CHATS`` of them, 3 answers each, every answer priced through
litellm's cost map as ``--model-info`` declares it) beside cat's as many (the check passes over them: it reads the
index of every chat); a limit far above what was spent, so every check folds and prices everything. Cold: the
folder opened again each time (a restart), a new read side, spend book and guard, then one check
(``SpendGuard.over_now``, what ``check`` runs on its worker thread). Warm: the same guard asked ``WARM`` times.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from bench import result
from engine.files import models
from engine.offline import litellm
from engine.read import ReadSide
from engine.spend import SpendGuard, UsageBook, spent
from ledger.events import Created, RequestSent, Started
from store.limits import DEFAULT, MemoryLimits, SpendLimit
from store.tinydb.store import Store
from tests.support.ledger_builders import conversation_events

NAME = "bench.spend_bench"
MODEL = "openai/spend-bench"  # priced here, as --model-info would
NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)  # the day the built chats ran (tests.support.ledger_builders)
BEN, CAT = "local:ben", "local:cat"


def write_folder(folder: Path, chats: int) -> None:
    store = Store.open(folder, flush_interval=0.05)
    for person in (BEN, CAT):
        for n in range(chats):
            events = conversation_events(f"{person[6:]}{n:04d}", answers=3, chunks=20)
            first = events[0]
            assert isinstance(first, Created)
            for event in [replace(first, owner=person), *events[1:]]:
                store.append(replace(event, model=MODEL) if isinstance(event, Started | RequestSent) else event)
    assert store.close() == 0


def guard_on(store: Store) -> SpendGuard:
    read = ReadSide(store)
    limits = MemoryLimits()
    limits.put(DEFAULT, SpendLimit(day_usd=1000.0, month_tokens=10**12))
    return SpendGuard(UsageBook(store, lambda: read.state), limits, clock=lambda: NOW)


def cold(folder: Path, times: int) -> list[float]:
    out = []
    for _ in range(times):
        store = Store.open(folder)
        try:
            guard = guard_on(store)
            started = time.perf_counter()
            assert guard.over_now(BEN) is None
            out.append(time.perf_counter() - started)
        finally:
            store.close()
    return out


def warm(folder: Path, times: int) -> tuple[list[float], int]:
    store = Store.open(folder)
    try:
        guard = guard_on(store)
        assert guard.over_now(BEN) is None
        rows = len(guard.book.rows(BEN))
        assert spent(guard.book.rows(BEN)).cost.usd, "every attempt priced (litellm's map, as --model-info sets)"
        out = []
        for _ in range(times):
            started = time.perf_counter()
            assert guard.over_now(BEN) is None
            out.append(time.perf_counter() - started)
        return out, rows
    finally:
        store.close()


def ms(value: float) -> str:
    return f"{value * 1e3:.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    quick = parser.parse_args().quick
    colds, warms = (3, 50) if quick else (7, 300)
    models.declare({MODEL: {"input_cost_per_token": 1e-6, "output_cost_per_token": 3e-6}})
    litellm()
    models.register()
    figures = {}
    with tempfile.TemporaryDirectory() as root:
        for chats in (1, 200):
            folder = Path(root) / f"chats-{chats}"
            write_folder(folder, chats)
            cold_times = cold(folder, colds)
            warm_times, rows = warm(folder, warms)
            cut = statistics.quantiles(warm_times, n=20)
            figures[chats] = (statistics.median(cold_times), cut[9], cut[18], rows)
    one, many = figures[1], figures[200]
    for chats, (cold_p50, warm_p50, warm_p95, rows) in figures.items():
        print(f"{chats} chat(s), {rows} attempts: cold {ms(cold_p50)}; warm p50 {ms(warm_p50)}, p95 {ms(warm_p95)}")
    result.row(NAME, "spend-limit check, 200 chats (600 attempts), cold: after a restart, chats read from files",
               ms(many[0]), f"1 chat, same run: {ms(one[0])} ({many[0] / one[0]:.0f}×)")  # fmt: skip
    result.row(NAME, "spend-limit check, 200 chats (600 attempts), warm: folds kept, p50 / p95",
               f"{ms(many[1])} / {ms(many[2])}", f"1 chat, same run: {ms(one[1])} / {ms(one[2])}")  # fmt: skip
    result.save()


if __name__ == "__main__":
    main()
