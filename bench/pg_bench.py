"""The ledger on PostgreSQL, one and two instances (not a test): prints events/s appended and made durable.

    .venv/bin/python -m bench.pg_bench

Starts a throwaway PostgreSQL cluster (as the tests do), then, for 1 and 2 instances (each a separate process
with its own ``PgStore``), runs 50 concurrent streams in all (split between the instances): each stream is a
conversation that gets created, a question, and an answer of ``CHUNKS`` chunks appended in turn with the other
streams' chunks, as the engine appends them; the figure is events appended and durable per second of wall time,
from the first append to the last instance's flush. The TinyDB store (one instance only) is run the same way
for comparison.

Fencing (issue 27): every PostgreSQL stream claims its attempt (``AttemptOwners.claim``: an epoch issued by the
database) and appends every event of it with that epoch (``PgStore.hold``), as the engine does; "fencing on" is the
database's trigger checking each row's epoch in the batch's transaction, "fencing off" the same code on a fresh
database after ``ALTER TABLE events DISABLE TRIGGER events_fenced``. Runs alternate off/on, 3 each per instance
count, in one invocation; a run with fencing on asserts 0 refused parts and 0 ``attempt_owners`` rows left (the
``persisted`` rows removed them). ``PG_BENCH_ONLY=store`` skips the browser part.

Then the real app (``python main.py --database-url``) with a headless Chromium tab X on instance A and a tab Y on
the same chat, on A itself (1 instance: the baseline) or on instance B (2 instances), ``ROUNDS`` times: X sends,
a long answer streams from the scripted upstream; the fan-out delay is the time from A appending the chunk that
carries a given word (the chunk event's ``ts``) to that word appearing in Y's DOM (both wall clocks, one
machine); then Stop is clicked in Y and the figure is the time from the click to the upstream seeing its
connection closed (on A, which runs the stream).

``--quick``: three runs per fencing setting and instance count instead of five (one run alone is noise here). The
store figures are also recorded as rows for ``bench.report`` (``bench.result``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import psycopg
from playwright.sync_api import Page, expect, sync_playwright

from bench import result
from ledger.events.core import AnyEvent
from store.api import EventStore
from store.health import ProblemLog
from store.postgres.owners import AttemptOwners
from store.postgres.schema import migrate
from store.postgres.store import PgStore
from store.tinydb.store import Store
from tests.support.app_process import CHROMIUM_ARGS, AppProcess
from tests.support.browser import conversation_id, last_answer, new_page, send
from tests.support.ledger_builders import conversation_events
from tests.support.postgres import PostgresCluster
from tests.support.upstream import Behavior, ScriptedUpstream, serve

STREAMS = 50
CHUNKS = 400
ROUNDS = int(os.environ.get("PG_BENCH_ROUNDS", "20"))
MARK = 30  # the word whose arrival in both tabs is compared
WATCH = """n => { window.__hit = 0; if (window.__watch) window.__watch.disconnect(); const seen = () => {
  const b = [...document.querySelectorAll('.lc-assistant .lc-body')].pop();
  if (!window.__hit && b && b.textContent.includes(n)) window.__hit = performance.timeOrigin + performance.now(); };
  window.__watch = new MutationObserver(seen);
  window.__watch.observe(document.body, {subtree: true, childList: true, characterData: true}); }"""
ROOT = Path(__file__).resolve().parent.parent


def worker(kind: str, location: str, first: int, count: int) -> None:
    """One instance: ``count`` streams, their chunks interleaved, each attempt claimed (PostgreSQL) right before
    its first event; prints {events, seconds, refused, claims_ms} once durable."""
    refused: list[str] = []
    pg = PgStore.open(location, on_refused=lambda cid, aids: refused.append(cid)) if kind == "postgres" else None
    store: EventStore = pg if pg is not None else Store.open(location)
    owners = None
    if pg is not None:
        owners = AttemptOwners(
            location, pg.instance, lease=10.0, on_request=lambda r: None, problems=ProblemLog(logging.getLogger())
        )
        owners.start()
    streams = [conversation_events(f"s{first + n:03d}", answers=1, chunks=CHUNKS) for n in range(count)]
    order: list[AnyEvent] = [unique(e) for step in zip(*streams, strict=True) for e in step]
    print("READY", flush=True)
    sys.stdin.readline()
    claims: list[float] = []
    started = time.perf_counter()
    for event in order:
        attempt = getattr(event, "attempt_id", None)
        if pg is not None and owners is not None and attempt is not None and attempt not in owners.held:
            at = time.perf_counter()
            pg.hold(attempt, owners.claim(attempt, event.conversation_id))
            claims.append((time.perf_counter() - at) * 1000)
        store.append(event)
    assert store.flush_sync(timeout=120), "a write failed: the figure would not mean anything"
    seconds = time.perf_counter() - started
    if owners is not None:
        owners.close()
    store.close()
    result = {"events": len(order), "seconds": seconds, "refused": len(refused), "claims_ms": claims}
    print(json.dumps(result), flush=True)


def unique(event: AnyEvent) -> AnyEvent:
    """The event with an attempt id unique across conversations (as the engine's are)."""
    attempt = getattr(event, "attempt_id", None)
    return replace(event, attempt_id=f"{event.conversation_id}-{attempt}") if attempt else event


def run(kind: str, location: str, instances: int, fencing: bool = True) -> dict[str, float]:
    """Events/s over all instances, from the go signal to the last instance durable; with fencing on: refused
    parts, ``attempt_owners`` rows left, claims and the median claim."""
    if kind == "postgres":
        migrate(location)
        if not fencing:
            with psycopg.connect(location, autocommit=True) as conn:
                conn.execute("ALTER TABLE events DISABLE TRIGGER events_fenced")
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
    left = 0
    if kind == "postgres" and fencing:
        with psycopg.connect(location) as conn:
            row = conn.execute("SELECT count(*) FROM attempt_owners").fetchone()
            left = int(row[0]) if row else -1
    claims = [ms for r in results for ms in r["claims_ms"]]
    return {
        "rate": float(sum(r["events"] for r in results) / wall),
        "refused": float(sum(r["refused"] for r in results)),
        "left": float(left),
        "claims": float(len(claims)),
        "claim_ms": statistics.median(claims) if claims else 0.0,
    }


def across(url: str, upstream: ScriptedUpstream, instances: int, browser: object) -> tuple[list[float], list[float]]:
    """(Stop in tab Y -> upstream closed, ms; word in tab X -> same word in tab Y, ms) over ``ROUNDS`` answers."""
    root = Path(tempfile.mkdtemp(prefix="pg-bench-"))
    apps = [AppProcess(root / f"i{n}", upstream.base_url, "--database-url", url) for n in range(instances)]
    stops: list[float] = []
    delays: list[float] = []
    missed: list[int] = []
    try:
        for app in apps:
            app.start(timeout=120)
        x: Page = new_page(browser, apps[0].url)
        y: Page | None = None
        for n in range(ROUNDS):
            words = [f"r{n}w{k}" for k in range(600)]
            upstream.plan(Behavior(text=" ".join(words), chunk_delay=0.02))
            if y is not None:
                y.evaluate(WATCH, words[MARK])
            send(x, f"round {n}")
            cid = conversation_id(x)
            if y is None:  # the first round opens tab Y on the chat (no fan-out figure for it)
                y = new_page(browser, f"{apps[-1].url}/chat/{cid}")
            expect(last_answer(y)).to_contain_text(words[MARK + 10], timeout=30_000)
            if n:
                delays.append(float(y.evaluate("window.__hit")) - chunk_stamp(url, cid, words[MARK]))
            stop = y.get_by_role("button", name="Stop")
            expect(stop).to_be_visible()
            record = upstream.last
            clicked = time.monotonic()
            stop.click()
            while record.disconnected_at is None and not record.finished:
                time.sleep(0.005)  # the poll interval of this measurement's wait
            if record.disconnected_at is None:
                missed.append(n)  # the answer ran to its end: this Stop never reached the upstream
            else:
                stops.append((record.disconnected_at - clicked) * 1000)
            for page in (x, y):
                expect(last_answer(page)).not_to_have_attribute("data-status", "streaming", timeout=30_000)
                expect(page.get_by_role("button", name="Send")).to_be_visible(timeout=30_000)
    finally:
        for app in apps:
            app.stop()
    if missed:
        print(f"  ({instances} instance(s): in round(s) {missed} the answer ended before the Stop reached it)")
    return stops, delays


def chunk_stamp(url: str, cid: str, word: str) -> float:
    """When instance A appended the chunk carrying ``word`` (its ``ts``, wall clock), in ms since the epoch."""
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT ts FROM events WHERE conversation_id = %s AND kind = 'chunk' AND payload->>'text' ~ %s",
            (cid, rf"(^|\s){word}(\s|$)"),
        ).fetchone()
    assert row is not None, f"no chunk with {word}"
    return datetime.fromisoformat(str(row[0])).timestamp() * 1000


def figure(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"median {statistics.median(values):.0f} ms, p95 {p95:.0f} ms (n={len(values)})"


def main() -> None:
    runs = 3 if "--quick" in sys.argv else 5
    cluster = PostgresCluster().start()
    try:
        if os.environ.get("PG_BENCH_ONLY") != "store":
            tabs(cluster)
        events = STREAMS * (CHUNKS + 6)
        print(
            f"{STREAMS} concurrent streams of {CHUNKS} chunks ({events} events), appended and durable "
            f"(median of {runs}, off/on alternating; each part written under its savepoint with one COPY)"
        )
        medians: dict[int, tuple[float, float]] = {}
        for instances in (1, 2):
            off: list[dict[str, float]] = []
            on: list[dict[str, float]] = []
            for _ in range(runs):
                off.append(run("postgres", cluster.new_database(), instances, fencing=False))
                on.append(run("postgres", cluster.new_database(), instances, fencing=True))
            rate_off, rate_on = (statistics.median(r["rate"] for r in runs) for runs in (off, on))
            refused, left = sum(r["refused"] for r in on), sum(r["left"] for r in on)
            assert refused == 0 and left == 0, f"fencing on: {refused} parts refused, {left} rows left"
            print(
                f"  PostgreSQL, {instances} instance{'s' if instances > 1 else ' '}: fencing off {rate_off:,.0f} "
                f"events/s   fencing on {rate_on:,.0f} events/s   ({(rate_on - rate_off) / rate_off * 100:+.1f}%)"
            )
            print(
                f"  fencing on: 0 parts refused, 0 attempt_owners rows left, {on[0]['claims']:.0f} claims a run "
                f"(median claim {statistics.median(r['claim_ms'] for r in on):.1f} ms)"
            )
            medians[instances] = (rate_off, rate_on)
        with tempfile.TemporaryDirectory() as tmp:
            rates = [run("tinydb", str(Path(tmp) / f"d{n}"), 1)["rate"] for n in range(runs)]
            tiny = statistics.median(rates)
            print(f"  TinyDB, 1 instance: {tiny:,.0f} events/s (median of {runs})")
        for instances, (rate_off, rate_on) in medians.items():
            result.row(
                "bench.pg_bench",
                f"{STREAMS} concurrent streams x {CHUNKS} chunks ({events:,} events) appended and durable, PostgreSQL "
                f"on the same machine, {instances} instance{'s' if instances > 1 else ''}, fencing on "
                f"(median of {runs})",
                f"{rate_on:,.0f} events/s",
                f"fencing off (trigger disabled): {rate_off:,.0f} events/s ({rate_on / rate_off:.2f}x); "
                f"TinyDB, 1 instance: {tiny:,.0f} events/s",
            )
        result.save()
    finally:
        cluster.stop()


def tabs(cluster: PostgresCluster) -> None:
    """The app with two tabs: Stop and fan-out figures."""
    print(f"(chromium tabs: {ROUNDS} rounds; PG_BENCH_ROUNDS changes it)", flush=True)
    with sync_playwright() as p, contextlib.contextmanager(serve)() as upstream:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        print(f"The app, tab X on instance A, tab Y on the same chat; {ROUNDS} answers each")
        for instances in (1, 2):
            stops, delays = across(cluster.new_database(), upstream, instances, browser)
            where = "A too (1 instance)" if instances == 1 else "B (2 instances)"
            print(f"  tab Y on {where}: Stop in Y -> upstream closed: {figure(stops)}")
            print(f"  tab Y on {where}: chunk appended on A -> in Y's DOM: {figure(delays)}")
        browser.close()


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker"]:
        worker(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    else:
        main()
