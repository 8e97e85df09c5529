"""Two real app processes on one PostgreSQL, a Chromium tab on each: a stream running on one shows live on the
other; Stop, Retry and delete from the other reach the instance that runs it; a killed owner's answer is finalized
by the survivor. The instances and the database are shared by the tests of this module (start-up costs seconds).
The two lease timings run in the ``solo`` phase (tasks.py test), with ``MARGIN`` past the lease.
"""

from __future__ import annotations

import os
import signal
import time

import pytest
from playwright.sync_api import Page, expect

from app.cluster import LEASE
from tests.support.app_process import AppProcess
from tests.support.browser import Pages, conversation_id, last_answer, send, visible_words, wait_words
from tests.support.instances import AppsOnOneDatabase
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import nothing_more_for_blocking, wait_until_blocking

WORDS = [f"w{n}" for n in range(800)]
MARGIN = 3.0  # seconds past the lease for the survivor's check, its write and the tab's update (solo phase)


def pid_of(writer: str) -> int:
    return int(writer.split(":")[1])


def streaming_on_a(pair: AppsOnOneDatabase, open_page: Pages, upstream: ScriptedUpstream) -> tuple[Page, Page, str]:
    """A tab on A sends a long answer; a tab on B opens the same chat and sees it stream."""
    return streaming_on(pair.a, pair, open_page, upstream, "tell a long story", 10)


def streaming_on(
    owner: AppProcess, pair: AppsOnOneDatabase, open_page: Pages, upstream: ScriptedUpstream, question: str, words: int
) -> tuple[Page, Page, str]:
    """A tab on ``owner`` sends a long answer; a tab on B opens the same chat and sees ``words`` words of it."""
    on_owner = open_page(owner)
    upstream.plan(Behavior(text=" ".join(WORDS), chunk_delay=0.02))
    send(on_owner, question)
    cid = conversation_id(on_owner)
    pair.holding(cid)
    on_b = open_page(pair.b, f"/chat/{cid}")
    wait_words(on_b, words)
    return on_owner, on_b, cid


def test_a_stream_running_on_one_instance_shows_live_on_the_other_and_stop_there_closes_the_upstream(
    apps_on_one_database: AppsOnOneDatabase, open_page: Pages, upstream: ScriptedUpstream
) -> None:
    pair = apps_on_one_database
    on_a, on_b, cid = streaming_on_a(pair, open_page, upstream)
    seen = len(visible_words(on_b))
    wait_words(on_b, seen + 20)  # live: it keeps growing on B
    on_b.get_by_role("button", name="Stop").click()
    wait_until_blocking(lambda: upstream.last.disconnected_at is not None, what="the upstream sees the disconnect")
    for page in (on_a, on_b):
        expect(last_answer(page)).to_have_attribute("data-status", "interrupted")
    words = visible_words(on_b)
    assert words == WORDS[: len(words)] and visible_words(on_a) == words
    rows = pair.rows(cid)
    kinds = [kind for kind, _, _ in rows]
    cancel = next(p | {"writer": w} for k, w, p in rows if k == "cancel_requested")
    closed = next(w for k, w, _ in rows if k == "upstream_closed")
    assert pid_of(cancel["requested_by"]) == pair.b.proc.pid, "the ledger says B asked for the cancel"
    assert pid_of(cancel["writer"]) == pid_of(closed) == pair.a.proc.pid, "A, which ran it, closed the upstream"
    assert cancel["source"] == "user" and kinds[-2:] == ["cancelled", "persisted"]


def test_stop_then_retry_from_the_other_instance_runs_a_new_attempt_there_that_both_tabs_show(
    apps_on_one_database: AppsOnOneDatabase, open_page: Pages, upstream: ScriptedUpstream
) -> None:
    pair = apps_on_one_database
    on_a, on_b, cid = streaming_on_a(pair, open_page, upstream)
    upstream.plan(Behavior(text="a fresh answer from the retry", chunk_delay=0.01))
    on_b.get_by_role("button", name="Stop").click()
    last_answer(on_b).get_by_role("button", name="Retry").click()  # at once: A may still hold the write lease
    for page in (on_a, on_b):
        expect(last_answer(page)).to_have_attribute("data-status", "complete")
        expect(last_answer(page)).to_contain_text("a fresh answer from the retry")
        expect(last_answer(page)).to_have_attribute("data-attempt", "2/2")
    rows = pair.rows(cid)
    cancel = next(p for k, _, p in rows if k == "cancel_requested")
    retry_writer = next(w for k, w, _ in rows if k == "retrying")
    assert pid_of(cancel["requested_by"]) == pair.b.proc.pid and pid_of(retry_writer) == pair.b.proc.pid
    assert [k for k, _, _ in rows].count("persisted") == 2


def test_deleting_on_the_other_instance_mid_stream_stops_it_and_leaves_nothing_after_deleted(
    apps_on_one_database: AppsOnOneDatabase, open_page: Pages, upstream: ScriptedUpstream
) -> None:
    pair = apps_on_one_database
    on_a, on_b, cid = streaming_on_a(pair, open_page, upstream)
    item = on_b.locator(f"[data-conversation='{cid}']")
    item.get_by_role("button", name="Delete").click()
    on_b.get_by_role("dialog").get_by_role("button", name="Delete").click()
    wait_until_blocking(lambda: upstream.last.disconnected_at is not None, what="the upstream sees the disconnect")
    wait_until_blocking(lambda: [k for k, _, _ in pair.rows(cid)] == ["deleted"], what="only the tombstone left")
    nothing_more_for_blocking(1.0)
    assert [k for k, _, _ in pair.rows(cid)] == ["deleted"], "nothing written after the deletion"
    expect(on_a.get_by_text("This conversation was deleted.")).to_be_visible()


@pytest.mark.solo  # "in time" is the lease's seconds, measured with nothing else running (tasks.py test)
def test_killing_the_owner_mid_stream_lets_the_other_instance_mark_the_answer_interrupted_in_time(
    apps_on_one_database: AppsOnOneDatabase, open_page: Pages, upstream: ScriptedUpstream
) -> None:
    pair = apps_on_one_database
    owner = pair.spares[0]
    try:
        _, on_b, cid = streaming_on(owner, pair, open_page, upstream, "a story that will be cut", 15)
    finally:
        owner.kill()
    killed = time.monotonic()
    expect(last_answer(on_b)).to_have_attribute("data-status", "interrupted", timeout=(LEASE + MARGIN) * 1000)
    assert time.monotonic() - killed < LEASE + MARGIN
    expect(last_answer(on_b)).to_contain_text("Stopped")
    rows = pair.rows(cid)
    assert [k for k, _, _ in rows][-2:] == ["recovered", "persisted"]
    persisted_writer, persisted = rows[-1][1], rows[-1][2]
    assert pid_of(persisted_writer) in pair.others(owner) and persisted["status"] == "interrupted"
    text = persisted["text"].split()
    assert text == WORDS[: len(text)] and len(text) >= 15
    assert wait_until_blocking(lambda: visible_words(on_b), what="words") == text


@pytest.mark.solo  # the lease's seconds, measured with nothing else running (tasks.py test)
def test_an_owner_that_stops_renewing_its_lease_is_finalized_by_the_other_instance_once_the_lease_expired(
    apps_on_one_database: AppsOnOneDatabase, open_page: Pages, upstream: ScriptedUpstream
) -> None:
    pair = apps_on_one_database
    owner = pair.spares[1]
    assert owner.proc is not None
    try:
        _, on_b, cid = streaming_on(owner, pair, open_page, upstream, "a story whose server freezes", 15)
        os.kill(owner.proc.pid, signal.SIGSTOP)  # alive (so not known dead) but renewing nothing: another host's fate
        frozen = time.monotonic()
        expect(last_answer(on_b)).to_have_attribute("data-status", "interrupted", timeout=(LEASE + MARGIN) * 1000)
        waited = time.monotonic() - frozen
    finally:
        os.kill(owner.proc.pid, signal.SIGCONT)
        owner.kill()
    assert LEASE * 2 / 3 - 0.5 < waited < LEASE + MARGIN, "after the lease (renewed every lease/3 s), not before"
    rows = pair.rows(cid)
    assert [k for k, _, _ in rows][-2:] == ["recovered", "persisted"] and pid_of(rows[-1][1]) in pair.others(owner)
    text = rows[-1][2]["text"].split()
    assert text == WORDS[: len(text)] and len(text) >= 15
