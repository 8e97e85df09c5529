"""Two real app processes on a throwaway PostgreSQL that is restarted under them (issue 27, "Must show" (a), (c)
and (d)): after each restart the first Send on each instance is written and answered (never silently lost), and
once every answer ended no owner row is left in ``attempt_owners``; an owner frozen past its lease comes back to
find the survivor's end standing: it writes nothing after it, its upstream is closed, both tabs agree. The
cluster is this module's own: restarting it never touches the session's database. Budget: 90 s for the module.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator

import psycopg
import pytest
from playwright.sync_api import Page, expect

from engine.cluster import LEASE
from tests.support.app_runner import AppRunner
from tests.support.browser import Pages, conversation_id, last_answer, send, visible_words, wait_words
from tests.support.instances import AppsOnOneDatabase
from tests.support.postgres import PostgresCluster, throwaway_cluster
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import nothing_more_for_blocking, wait_until_blocking

WORDS = [f"w{n}" for n in range(800)]
IDLE_AFTER_RESTART = (0.0, 0.3, 1.0, 2.0, 3.5)  # seconds the database is healthy and idle before the Sends


@pytest.fixture(scope="module")
def faulty() -> Iterator[PostgresCluster]:
    yield from throwaway_cluster()


@pytest.fixture(scope="module")
def pair(faulty: PostgresCluster, run_app: AppRunner) -> Iterator[AppsOnOneDatabase]:
    url = faulty.new_database()
    with run_app.together(2, "--database-url", url) as (a, b):
        yield AppsOnOneDatabase(url, a, b, ())


def owner_rows(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM attempt_owners").fetchone()
    return int(row[0]) if row else -1


def idle_for(seconds: float) -> None:
    """The timing under test: how long the restarted database stays idle before anyone sends (not a wait)."""
    time.sleep(seconds)


def answered(page: Page, text: str) -> None:
    expect(last_answer(page)).to_have_attribute("data-status", "complete", timeout=10_000)
    expect(last_answer(page)).to_contain_text(text)


def test_after_each_restart_of_the_database_the_first_send_on_each_instance_is_written_and_answered(
    faulty: PostgresCluster, pair: AppsOnOneDatabase, open_page: Pages, upstream: ScriptedUpstream
) -> None:
    on_a, on_b = open_page(pair.a), open_page(pair.b)
    for n, idle in enumerate(IDLE_AFTER_RESTART):
        faulty.restart()
        idle_for(idle)
        for name, page in (("A", on_a), ("B", on_b)):
            upstream.plan(Behavior(text=f"answer {n} from {name}"))
            send(page, f"question {n} on {name}")  # the Send is taken at once: its answer's element appears
            answered(page, f"answer {n} from {name}")
            assert page.get_by_label("Message").input_value() == "", "the box empties once the submit is recorded"
    wait_until_blocking(lambda: owner_rows(pair.url) == 0, timeout=10, what="every owner row released")
    for process in (pair.a, pair.b):
        kinds = [e["kind"] for e in process.export()]
        assert kinds.count("submitted") == kinds.count("persisted"), "every Send written and its answer ended"


def test_an_owner_frozen_past_its_lease_comes_back_to_the_survivors_end_and_writes_nothing_after_it(
    pair: AppsOnOneDatabase, open_page: Pages, upstream: ScriptedUpstream
) -> None:
    a, b = pair.a, pair.b
    assert a.proc is not None and b.proc is not None
    on_a = open_page(a)
    upstream.plan(Behavior(text=" ".join(WORDS), chunk_delay=0.02))
    send(on_a, "a story whose server freezes")
    cid = conversation_id(on_a)
    record = upstream.records[-1]
    on_b = open_page(b, f"/chat/{cid}")
    wait_words(on_b, 15)
    os.kill(a.proc.pid, signal.SIGSTOP)
    try:
        expect(last_answer(on_b)).to_have_attribute("data-status", "interrupted", timeout=(LEASE + 4) * 1000)
    finally:
        os.kill(a.proc.pid, signal.SIGCONT)
    rows = pair.rows(cid)
    ended = max(n for n, (kind, _, _) in enumerate(rows) if kind == "persisted")
    assert [k for k, _, _ in rows][ended - 1 : ended + 1] == ["recovered", "persisted"]
    assert int(rows[ended][1].split(":")[1]) == b.proc.pid, "the survivor wrote the end"
    wait_until_blocking(lambda: record.disconnected_at is not None, timeout=LEASE, what="A's upstream closed")
    expect(last_answer(on_a)).to_have_attribute("data-status", "interrupted", timeout=LEASE * 1000)
    nothing_more_for_blocking(1.0)
    after = pair.rows(cid)[ended + 1 :]
    assert not [k for k, w, _ in after if int(w.split(":")[1]) == a.proc.pid], "A wrote nothing after B's end"
    assert [k for k, _, _ in after] == [k for k, _, _ in after if k.startswith("stale")]
    text = rows[ended][2]["text"].split()
    assert text == WORDS[: len(text)] and len(text) >= 15
    assert visible_words(on_a) == visible_words(on_b) == text, "both tabs show the survivor's end"
    wait_until_blocking(lambda: owner_rows(pair.url) == 0, timeout=LEASE * 2, what="no owner row left")
