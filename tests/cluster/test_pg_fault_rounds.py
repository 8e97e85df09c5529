"""The database faults of issue 40, each in rounds, on two real instances with a Chromium tab on each: PostgreSQL
restarted mid-stream, stopped for 10 s mid-stream, Stop pressed while it is down, and the owner frozen for 9 s.

After every fault: each tab shows what the ledger holds and what the upstream sent (the whole answer, or the prefix
a Stop kept); saving resumes once the database answers again (the first event the app writes after it, by the
database's own clock); every ``GET /`` of either instance while it is not frozen was answered; a follow-up from
either instance reaches the model with the ledger's text as its history.

``FAULT_ROUNDS=n`` runs every fault ``n`` times (the record for issue 40: 5, on an idle machine) and then holds the
promised times: saving back within ``RESUME`` seconds, ``GET /`` under ``PAGE_FAST`` throughout. The default run is
one round on a loaded machine, where they are printed and only a liveness limit is held (speed is measured, never
asserted under load), with a 4 s outage and without the frozen owner (``test_pg_faults.py`` freezes owners in
every run). Budget: one round ~45 s, mostly waiting.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from datetime import datetime

import psycopg
import pytest
from playwright.sync_api import Page, expect

from tests.support.app_runner import AppRunner
from tests.support.browser import Pages, conversation_id, last_answer, send, visible_words, wait_words
from tests.support.instances import AppsOnOneDatabase
from tests.support.pinger import Pinger, slowest
from tests.support.postgres import PostgresCluster
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import idle_for, wait_until_blocking

pytestmark = pytest.mark.early  # a minute of mostly waiting: started first (tests/conftest.py)
ROUNDS = int(os.environ.get("FAULT_ROUNDS", "1"))
MEASURED = "FAULT_ROUNDS" in os.environ  # a record on an idle machine: the promised times are held
PAGE_FAST = 0.3  # seconds: GET / on either live instance, throughout (held with FAULT_ROUNDS)
RESUME = 2.0  # seconds from the database answering to the app's first write after it (held with FAULT_ROUNDS)
RESUME_LIVENESS = 15.0  # seconds, held in every run (the bug it guards: saving came back after ~2 minutes)
OUTCOME = 60.0  # seconds an outcome may take to show on a loaded machine (a liveness limit, never a bound)
DOWN_FOR = 10.0 if MEASURED else 4.0  # seconds the database stays down (the record: the 10 s)
FROZEN_FOR = 9.0
# words of each fault's answer, 20 ms apart: still streaming when the database is back or the owner wakes
LENGTH = {"restart": 500, "outage": 800 if MEASURED else 400, "stop-while-down": 1500, "frozen-owner": 1500}
WORDS = [f"w{n}" for n in range(max(LENGTH.values()))]
# the frozen owner is in the record only: in every run, test_pg_faults.py freezes owners twice with more checks
FAULTS = ("restart", "outage", "stop-while-down", *(("frozen-owner",) if MEASURED else ()))


@pytest.fixture(scope="module")
def pair(faulty: PostgresCluster, run_app: AppRunner) -> Iterator[AppsOnOneDatabase]:
    url = faulty.new_database()
    with run_app.together(2, "--database-url", url) as (a, b):
        yield AppsOnOneDatabase(url, a, b, ())


def database_clock(url: str) -> datetime:
    """When the database started answering again, by its own clock (its server process's start)."""

    def now() -> datetime | None:
        try:
            with psycopg.connect(url, connect_timeout=2) as conn:
                row = conn.execute("SELECT pg_postmaster_start_time()").fetchone()
        except psycopg.OperationalError:
            return None
        return row[0] if row else None

    at = wait_until_blocking(now, timeout=OUTCOME, what="the database answers")
    assert at is not None
    return at


def first_write_after(url: str, back: datetime) -> float:
    """Seconds from ``back`` to the first event any instance wrote after it."""

    def first() -> datetime | None:
        with psycopg.connect(url) as conn:
            row = conn.execute("SELECT min(recorded_at) FROM events WHERE recorded_at >= %s", (back,)).fetchone()
        return row[0] if row and row[0] else None

    at = wait_until_blocking(first, timeout=OUTCOME, what="a write after the database came back")
    assert at is not None
    return (at - back).total_seconds()


def ended_text(pair: AppsOnOneDatabase, cid: str) -> tuple[str, str]:
    """The ledger's last answer end: its status and text."""
    ends = [p for k, _, p in pair.rows(cid) if k == "persisted"]
    assert ends, "the answer has an end in the ledger"
    return str(ends[-1].get("status")), str(ends[-1]["text"])


def follow_up(page: Page, upstream: ScriptedUpstream, text: str) -> None:
    """A follow-up from ``page`` reaches the model with ``text`` as the answer before it."""
    upstream.plan(Behavior(text="Follow-up answered."))
    send(page, "and then?")
    expect(last_answer(page)).to_have_attribute("data-status", "complete", timeout=OUTCOME * 1000)
    said = [m["content"] for m in upstream.last.messages if m["role"] == "assistant"]
    assert said[-1].split() == text.split(), "the model got the ledger's text as history"


def run_fault(fault: str, faulty: PostgresCluster, pair: AppsOnOneDatabase, pinger: Pinger, on_a: Page,
              on_b: Page, upstream: ScriptedUpstream) -> float | None:  # fmt: skip
    """One fault during an answer owned by A and watched on B, then a follow-up (from B after a restart or a Stop
    while down, from A after an outage or its own freeze); returns the seconds saving took to resume."""
    sent = WORDS[: LENGTH[fault]]
    upstream.plan(Behavior(text=" ".join(sent), chunk_delay=0.02))
    pinger.phase = f"{fault}: streaming"
    send(on_a, f"a long story, then {fault}")
    cid = conversation_id(on_a)
    pair.holding(cid)
    on_b.goto(f"{pair.b.url}/chat/{cid}")
    wait_words(on_b, 20)
    record = upstream.last
    assert not record.finished, "the answer ended before the fault (a machine too slow for this scenario): no test"
    pinger.phase = f"{fault}: the fault"
    resumed: float | None = None
    if fault == "restart":
        faulty.restart()
        resumed = first_write_after(pair.url, database_clock(pair.url))
    elif fault in ("outage", "stop-while-down"):
        faulty.down()
        try:
            if fault == "stop-while-down":
                on_a.get_by_role("button", name="Stop").click()
                expect(last_answer(on_a)).to_have_attribute("data-status", "interrupted", timeout=OUTCOME * 1000)
            idle_for(DOWN_FOR)
        finally:
            faulty.up()
        resumed = first_write_after(pair.url, database_clock(pair.url))
    else:
        pinger.pause("A")  # a frozen process answers nothing, by design
        os.kill(pair.a.pid, signal.SIGSTOP)
        try:
            idle_for(FROZEN_FOR)
            expect(last_answer(on_b)).to_have_attribute("data-status", "interrupted", timeout=OUTCOME * 1000)
        finally:
            os.kill(pair.a.pid, signal.SIGCONT)
    pinger.phase = f"{fault}: after it"
    status = "complete" if fault in ("restart", "outage") else "interrupted"
    for page in (on_a, on_b):
        expect(last_answer(page)).to_have_attribute("data-status", status, timeout=OUTCOME * 1000)
    pinger.resume("A")
    wait_until_blocking(lambda: ended_text(pair, cid)[0] == status, timeout=OUTCOME, what=f"the ledger's {status}")
    _, text = ended_text(pair, cid)
    words = text.split()
    assert visible_words(on_a) == visible_words(on_b) == words, "both tabs show the ledger's end"
    if status == "complete":
        assert words == sent and record.finished, "the whole answer, as sent"
    else:
        wait_until_blocking(lambda: record.disconnected_at is not None, timeout=OUTCOME, what="the upstream closed")
        assert 20 <= len(words) <= record.chunks_sent and words == WORDS[: len(words)], "a prefix of what was sent"
    pinger.phase = f"{fault}: the follow-up"
    follow_up(on_a if fault in ("outage", "frozen-owner") else on_b, upstream, text)
    return resumed


@pytest.mark.timeout(120 + 150 * ROUNDS)  # the suite's 180 s is for one round
def test_each_database_fault_leaves_page_ledger_and_upstream_agreeing_and_saving_back_within_two_seconds(
    faulty: PostgresCluster, pair: AppsOnOneDatabase, open_page: Pages, upstream: ScriptedUpstream
) -> None:
    on_a, on_b = open_page(pair.a), open_page(pair.b)
    resumed: dict[str, list[float]] = {fault: [] for fault in FAULTS}
    with Pinger({"A": pair.a.url, "B": pair.b.url}, every=1.0) as pinger:
        for _ in range(ROUNDS):
            for fault in FAULTS:
                on_a.goto(pair.a.url + "/")
                seconds = run_fault(fault, faulty, pair, pinger, on_a, on_b, upstream)
                if seconds is not None:
                    resumed[fault].append(seconds)
    loads = pinger.stop()
    print(f"\n{ROUNDS} round(s); saving resumed after (s): {resumed}; slowest GET /: {slowest(loads)}")
    limit = RESUME if MEASURED else RESUME_LIVENESS
    assert all(x <= limit for xs in resumed.values() for x in xs), f"saving resumed after {resumed} s"
    wall = time.time() - time.monotonic()  # a load's wall-clock time, to set beside an app's probes (app.probes)
    over = [(x.name, round(x.seconds, 3), x.phase, round(wall + x.at, 2)) for x in loads if x.seconds > PAGE_FAST]
    print("loads over", PAGE_FAST, "s (name, seconds, phase, wall time):", over)
    failed = [x for x in loads if x.status != 200]
    assert not failed, f"GET / not answered: {failed[:5]}"
    if MEASURED:
        assert max(x.seconds for x in loads) < PAGE_FAST, f"GET / slower than {PAGE_FAST} s: {slowest(loads)}"
