"""End-to-end: the real app process, headless Chromium (Debian's, via Playwright), the real test upstream.

One test per release scenario (docs/architecture.md). Each asserts only what a person sees in the browser, or what
the upstream's request log and the ledger export (``main.py export``) prove. Waits are for conditions, never fixed
sleeps; "nothing more appears" is watched for a full second.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support.app_process import FAKE_KEY, AppProcess
from tests.support.app_runner import AppRunner
from tests.support.browser import (
    Pages,
    conversation_id,
    last_answer,
    open_audit,
    send,
    visible_words,
    wait_words,
    watch_unchanged,
)
from tests.support.engine import EngineFactory, current_attempt
from tests.support.upstream import HOSTILE, Behavior, ScriptedUpstream
from tests.support.waiting import nothing_more_for_blocking, wait_until, wait_until_blocking
from ui.continued_view import JOIN_NAME

WORDS = [f"w{n}" for n in range(600)]
SILENCE = 4.0  # seconds before an upstream's first chunk where a Stop must land before it (on a busy machine too)
STORY = " ".join(WORDS)


# --- the module's app --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def app_options() -> tuple[str, ...]:
    return ("--idle-timeout", "3")


# --- scenarios ---------------------------------------------------------------------------------------------------


def test_stop_right_after_sending_shows_no_ghost_text_and_leaves_retry_and_input_usable(
    page: Page,
    upstream: ScriptedUpstream,
) -> None:
    upstream.plan(Behavior(text="GHOST " * 40, first_delay=SILENCE))
    send(page, "hello there")
    wait_until_blocking(lambda: len(upstream.records) == 1)
    page.get_by_role("button", name="Stop").click()
    expect(last_answer(page)).to_have_attribute("data-status", "empty")
    expect(last_answer(page)).to_contain_text("Stopped before any text")
    assert upstream.records[0].chunks_sent == 0, "the Stop came after the first chunk: the case was not tested"
    first_chunk_due = upstream.records[0].received_at + SILENCE
    watch_unchanged(page, max(0.5, first_chunk_due + 0.5 - time.monotonic()))  # past when it would have come
    expect(page.get_by_text("GHOST")).to_have_count(0)
    expect(last_answer(page).get_by_role("button", name="Retry")).to_be_enabled()
    expect(page.get_by_role("button", name="Send")).to_be_visible()
    assert upstream.records[0].chunks_sent == 0 and upstream.records[0].disconnected_at is not None
    upstream.plan(Behavior(text="second answer"))
    send(page, "are you there?")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    assert [m["role"] for m in upstream.records[-1].messages] == ["user", "user"]


def test_stop_mid_stream_keeps_exactly_what_was_seen_and_the_follow_up_carries_it(
    page: Page,
    upstream: ScriptedUpstream,
    app: AppProcess,
) -> None:
    upstream.plan(Behavior(text=STORY, chunk_delay=0.02))
    send(page, "count slowly")
    wait_words(page, 12)
    page.get_by_role("button", name="Stop").click()
    expect(last_answer(page)).to_have_attribute("data-status", "interrupted")
    seen = watch_unchanged(page, 1.0)
    expect(last_answer(page).get_by_text("Stopped", exact=True)).to_be_visible()
    assert seen == WORDS[: len(seen)] and len(seen) >= 12
    record = upstream.records[-1]
    assert record.disconnected_at is not None and not record.finished
    open_audit(page)
    counters = page.locator(".lc-audit-card").last
    expect(counters).to_contain_text("cancel: user")
    expect(counters).to_contain_text(re.compile(rf"(^|\D){len(seen)} chunks"))
    expect(counters).to_contain_text("upstream closed")
    upstream.plan(Behavior(text="sure"))
    send(page, "expand on point 2")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    follow_up = upstream.records[-1].messages
    assert follow_up[1]["role"] == "assistant" and follow_up[1]["content"].split() == seen
    assert follow_up[2] == {"role": "user", "content": "expand on point 2"}


def test_retry_right_after_stop_shows_only_the_new_tokens_and_both_attempts_stay_browsable(
    page: Page,
    upstream: ScriptedUpstream,
) -> None:
    upstream.plan(Behavior(text="OLD " * 300, chunk_delay=0.02), Behavior(text="NEW " * 60, chunk_delay=0.01))
    send(page, "hi")
    wait_words(page, 5)
    page.get_by_role("button", name="Stop").click()
    expect(last_answer(page)).to_have_attribute("data-status", "interrupted")
    last_answer(page).get_by_role("button", name="Retry").click()
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    expect(last_answer(page)).to_have_attribute("data-attempt", "2/2")
    assert visible_words(page) == ["NEW"] * 60
    page.get_by_role("button", name="Previous attempt").click()
    expect(last_answer(page)).to_have_attribute("data-attempt", "1/2")
    old = visible_words(page)
    assert old and set(old) == {"OLD"}
    expect(last_answer(page)).to_have_attribute("data-status", "interrupted")


def test_continue_after_stop_shows_one_answer_the_prefix_then_the_continuation_with_the_join_marked(
    page: Page,
    upstream: ScriptedUpstream,
) -> None:
    upstream.plan(Behavior(text=STORY, chunk_delay=0.02))
    send(page, "count for a while")
    wait_words(page, 12)
    page.get_by_role("button", name="Stop").click()
    expect(last_answer(page)).to_have_attribute("data-status", "interrupted")
    seen = watch_unchanged(page, 1.0)
    answers = page.locator(".lc-assistant").count()
    rest = " and then the rest, continued."
    upstream.plan(Behavior(text=rest, chunk_delay=0.01))
    last_answer(page).get_by_role("button", name="Continue this answer").click()
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    expect(page.locator(".lc-assistant")).to_have_count(answers)  # one answer, not a second bubble
    answer = last_answer(page)
    expect(answer.get_by_role("note", name=JOIN_NAME)).to_be_visible()
    assert visible_words(page) == [*seen, "continued", *rest.split()]
    expect(answer.get_by_role("button", name="Continue this answer")).to_have_count(0)  # it ended by itself
    sent = upstream.records[-1].messages
    assert sent[-2]["role"] == "assistant" and sent[-2]["content"].split() == seen, "the prefix, last"
    assert sent[-1]["role"] == "user" and "Continue" in sent[-1]["content"]
    open_audit(page)
    expect(page.locator(".lc-audit-card").last).to_contain_text("continues attempt 1")


#: seconds the old request holds its answer back: the Stop and Retry must have closed it by then, also on the
#: busiest seconds of a run (fresh run 75, at its start: 1.5 s was not always enough)
LATE = 4.0


def test_an_old_request_answering_late_never_reaches_the_screen_and_the_audit_shows_it(
    page: Page,
    upstream: ScriptedUpstream,
) -> None:
    upstream.plan(
        Behavior(text="LATEOLD " * 50, first_delay=LATE, chunk_delay=0.01),
        Behavior(text="FRESH " * 20, chunk_delay=0.01),
    )
    send(page, "slow one")
    wait_until_blocking(lambda: len(upstream.records) == 1)
    started = upstream.records[0].received_at
    page.get_by_role("button", name="Stop").click()
    last_answer(page).get_by_role("button", name="Retry").click()
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    wait_until_blocking(lambda: time.monotonic() > started + LATE + 0.5, timeout=LATE + 3)  # its answer time has passed
    watch_unchanged(page, 1.0)
    expect(page.get_by_text("LATEOLD")).to_have_count(0)
    assert visible_words(page) == ["FRESH"] * 20
    assert upstream.records[0].chunks_sent == 0 and upstream.records[0].disconnected_at is not None
    open_audit(page)
    cards = page.locator(".lc-audit-card")
    expect(cards).to_have_count(2)
    expect(cards.first).to_contain_text("cancel: user")
    expect(cards.first).to_contain_text(re.compile(r"(^|\D)0 chunks"))
    expect(cards.first).to_contain_text(re.compile(r"(^|\D)0 stale"))
    expect(cards.last).to_contain_text(re.compile(r"(^|\D)20 chunks"))


async def late_chunk_after_retry(data: Path, upstream: ScriptedUpstream) -> str:
    """A chat whose first answer was stopped and retried, and whose old request then delivered one more chunk to the
    engine's chunk gate, written to ``data`` by a real engine on the scripted upstream; its id.

    The chunk is handed to the gate the way the engine-level tests do (``AttemptRun.receive``): through the upstream
    no late chunk can reach it, because the one cancel entry marks the attempt closing, records
    ``cancel_requested`` and cancels the read task in the same step of the loop, and the task's ``finally`` closes
    the HTTP stream; the old request's further chunks are never read (scenario 4's first test shows that)."""
    engines = EngineFactory(data.parent, upstream)
    engine = engines(data)
    try:
        cid = engine.create_conversation()
        upstream.plan(Behavior(text="OLD " * 200, chunk_delay=0.02), Behavior(text="NEW " * 10, chunk_delay=0.01))
        _, m1 = await engine.submit(cid, "hi")
        await wait_until(lambda: current_attempt(engine, cid, m1).chunks_rendered >= 3, what="the old answer")
        old = engine.active_run(cid)
        assert old is not None
        await engine.cancel(cid, "user")
        await engine.retry(cid, m1)
        await wait_until(lambda: not engine.is_streaming(cid), what="the retry's answer")
        assert old.receive("LATEOLDTOKEN", "text") is False, "the old request's chunk reaches the gate late"
        assert await engine.flush()
        return cid
    finally:
        await engines.close()


def test_a_late_chunk_from_the_old_request_is_never_shown_and_the_audit_panel_counts_it_stale(
    run_app: AppRunner, open_page: Pages, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    with concurrent.futures.ThreadPoolExecutor(1) as thread:  # Playwright's loop runs on this one
        cid = thread.submit(asyncio.run, late_chunk_after_retry(data, upstream)).result(timeout=60)
    with run_app(data=data) as app:
        page = open_page(app, f"/chat/{cid}")
        expect(last_answer(page)).to_have_attribute("data-status", "complete")
        assert visible_words(page) == ["NEW"] * 10
        expect(page.get_by_text("LATEOLDTOKEN")).to_have_count(0)
        assert "LATEOLDTOKEN" not in page.content(), "not in the page at all, hidden or not"
        open_audit(page)
        cards = page.locator(".lc-audit-card")
        expect(cards).to_have_count(2)
        expect(cards.first).to_contain_text("cancel: user")
        expect(cards.first).to_contain_text(re.compile(r"(^|\D)1 stale"))
        expect(cards.last).to_contain_text(re.compile(r"(^|\D)0 stale"))


def test_a_network_drop_shows_a_readable_error_keeps_the_partial_and_retry_and_resend_work(
    page: Page,
    upstream: ScriptedUpstream,
) -> None:
    upstream.plan(Behavior(text="PARTIAL " * 80, drop_after=8, chunk_delay=0.01), Behavior(text="recovered answer"))
    send(page, "tell me")
    expect(last_answer(page)).to_have_attribute("data-status", "failed")
    expect(last_answer(page)).to_contain_text("Connection lost")
    expect(last_answer(page)).to_contain_text("The connection to the provider dropped in the middle of the answer.")
    expect(last_answer(page)).to_contain_text("not in context")
    assert "Traceback" not in page.locator("body").inner_text()
    assert visible_words(page) == ["PARTIAL"] * 8
    last_answer(page).get_by_role("button", name="Retry").click()
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    assert visible_words(page) == ["recovered", "answer"]
    # A drop before the first chunk is re-sent automatically: two requests, one attempt, one answer.
    upstream.plan(Behavior(text="x", drop_after=0), Behavior(text="after resend"))
    send(page, "again")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    assert visible_words(page) == ["after", "resend"]
    expect(last_answer(page)).to_have_attribute("data-attempt", "1/1")
    assert all("PARTIAL" not in json.dumps(r.messages) for r in upstream.records[-2:])
    open_audit(page)
    expect(page.locator(".lc-audit-card").last).to_contain_text(re.compile(r"(^|\D)2 requests"))


def test_leaving_and_coming_back_mid_stream_shows_everything_so_far_then_the_rest(
    page: Page,
    upstream: ScriptedUpstream,
    app: AppProcess,
) -> None:
    upstream.plan(Behavior(text=STORY, chunk_delay=0.015))
    send(page, "a long one")
    cid = conversation_id(page)
    wait_words(page, 10)
    page.get_by_role("button", name="New chat").click()
    page.wait_for_url(app.url + "/")
    wait_until_blocking(lambda: any(e["kind"] == "detached" for e in app.export(cid)), timeout=8)
    page.locator(f"[data-conversation='{cid}']").click()
    page.wait_for_url(f"**/chat/{cid}")
    words = visible_words(page)
    assert words[:3] == ["w0", "w1", "w2"] and words == WORDS[: len(words)] and len(words) >= 10
    page.reload()
    wait_words(page, len(words) + 1)
    assert visible_words(page)[: len(words)] == words
    expect(last_answer(page)).to_have_attribute("data-status", "complete", timeout=20_000)
    assert visible_words(page) == WORDS
    kinds = [e["kind"] for e in app.export(cid)]
    assert "attached" in kinds and "cancel_requested" not in kinds


def test_deleting_a_chat_while_it_streams_removes_it_closes_upstream_and_writes_nothing_after(
    page: Page,
    upstream: ScriptedUpstream,
    app: AppProcess,
) -> None:
    upstream.plan(Behavior(text=STORY, chunk_delay=0.02))
    send(page, "doomed chat")
    cid = conversation_id(page)
    wait_words(page, 5)
    item = page.locator(f"[data-conversation='{cid}']")
    item.get_by_role("button", name="Delete").click()
    page.get_by_role("dialog").get_by_role("button", name="Delete").click()
    expect(page.locator(f"[data-conversation='{cid}']")).to_have_count(0)
    wait_until_blocking(lambda: upstream.records[-1].disconnected_at is not None, timeout=5)
    sent = upstream.records[-1].chunks_sent
    nothing_more_for_blocking(0.5)
    assert upstream.records[-1].chunks_sent == sent and not upstream.records[-1].finished
    assert not (app.data_dir / f"conv-{cid}.json").exists()
    assert all(e["conversation_id"] != cid for e in app.export())


def test_two_tabs_on_one_chat_show_the_same_stream_and_stop_in_one_stops_both(
    open_page: Pages,
    app: AppProcess,
    upstream: ScriptedUpstream,
) -> None:
    first = open_page(app)
    upstream.plan(Behavior(text=STORY, chunk_delay=0.02))
    send(first, "shared stream")
    cid = conversation_id(first)
    second = open_page(app, f"/chat/{cid}")
    wait_words(second, 8)
    second.get_by_role("button", name="Stop").click()
    for page in (first, second):
        expect(last_answer(page)).to_have_attribute("data-status", "interrupted")
    seen = watch_unchanged(first, 1.0)
    assert visible_words(second) == seen and seen == WORDS[: len(seen)]


def test_hostile_model_output_is_shown_as_text_and_nothing_executes(
    page: Page,
    upstream: ScriptedUpstream,
) -> None:
    upstream.plan(Behavior(text=HOSTILE))
    send(page, "be nasty")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    body = page.locator(".lc-assistant .lc-body").last
    expect(body).to_contain_text("<script>window.__pwned = true</script>")
    expect(body).to_contain_text('<img src=x onerror="window.__pwned=true">')
    nothing_more_for_blocking(0.3)  # a window in which an injected script or handler would have run
    assert page.evaluate("window.__pwned") is None
    assert body.locator("script, img, b").count() == 0
    hrefs = body.locator("a").evaluate_all("els => els.map(e => e.getAttribute('href'))")
    assert all(not (h or "").lower().startswith("javascript") for h in hrefs)
    assert FAKE_KEY not in page.content()


@contextmanager
def streaming_in_its_own_app(
    run_app: AppRunner, open_page: Pages, upstream: ScriptedUpstream, words: int, *options: str
) -> Iterator[tuple[AppProcess, Page, str]]:
    """An app process of its own, a page on it, and an answer streaming with at least `words` words shown."""
    with run_app(*options) as app:
        page = open_page(app)
        upstream.plan(Behavior(text=STORY, chunk_delay=0.02))
        send(page, "long story")
        cid = conversation_id(page)
        wait_words(page, words)
        yield app, page, cid


def test_killing_the_server_mid_stream_and_restarting_shows_the_answer_interrupted_at_its_prefix(
    run_app: AppRunner,
    open_page: Pages,
    upstream: ScriptedUpstream,
) -> None:
    with streaming_in_its_own_app(run_app, open_page, upstream, 15) as (first, page, cid):
        seen_before = visible_words(page)
        wait_until_blocking(
            lambda: len(first.stored_text(cid).split()) >= len(seen_before), what="the words seen reaching the disk"
        )
        first.kill()
        with run_app(data=first.data_dir) as second:
            page.goto(f"{second.url}/chat/{cid}")
            expect(last_answer(page)).to_have_attribute("data-status", "interrupted")
            expect(last_answer(page)).to_contain_text("Stopped: the server restarted")
            words = visible_words(page)
            assert len(words) >= len(seen_before) and words == WORDS[: len(words)]
            persisted = [e for e in second.export(cid) if e["kind"] == "persisted"][-1]
            assert persisted["status"] == "interrupted" and persisted["text"].split() == words


def test_stopping_the_server_mid_stream_keeps_the_partial_as_stopped_by_shutdown(
    run_app: AppRunner,
    open_page: Pages,
    upstream: ScriptedUpstream,
) -> None:
    with streaming_in_its_own_app(run_app, open_page, upstream, 10) as (app, _page, cid):
        app.stop()  # SIGTERM: a graceful shutdown (``AppProcess.stop`` kills it, -9, if it is not over in 15 s)
        # uvicorn shuts down gracefully, then re-raises SIGTERM: -15 is the normal exit status here
        assert app.proc is not None and app.proc.returncode in (0, -15), "it ended by itself, not killed"
        events = app.export(cid)
        kinds = [e["kind"] for e in events]
        assert [e["source"] for e in events if e["kind"] == "cancel_requested"] == ["shutdown"]
        assert "upstream_closed" in kinds and kinds[-1] == "persisted"
        kept = events[-1]["text"].split()
        assert events[-1]["status"] == "interrupted" and kept and kept == WORDS[: len(kept)]
        assert upstream.records[-1].disconnected_at is not None and not upstream.records[-1].finished


def test_with_the_cancel_policy_leaving_mid_stream_stops_the_answer_and_coming_back_shows_it_stopped(
    run_app: AppRunner,
    open_page: Pages,
    upstream: ScriptedUpstream,
) -> None:
    with streaming_in_its_own_app(run_app, open_page, upstream, 8, "--leave-policy", "cancel") as (app, page, cid):
        page.get_by_role("button", name="New chat").click()
        page.wait_for_url(app.url + "/")
        wait_until_blocking(lambda: any(e["kind"] == "cancelled" for e in app.export(cid)), timeout=8)
        page.locator(f"[data-conversation='{cid}']").click()
        expect(last_answer(page)).to_have_attribute("data-status", "interrupted")
        expect(last_answer(page)).to_contain_text("Stopped: you left the chat")
        kept = watch_unchanged(page, 1.0)
        assert kept and kept == WORDS[: len(kept)]
        assert [e["source"] for e in app.export(cid) if e["kind"] == "cancel_requested"] == ["navigation"]
        assert upstream.records[-1].disconnected_at is not None and not upstream.records[-1].finished


def test_code_blocks_are_highlighted_and_have_a_working_copy_button(
    open_page: Pages,
    app: AppProcess,
    upstream: ScriptedUpstream,
) -> None:
    page = open_page(app, permissions=["clipboard-read", "clipboard-write"])
    code = "def add(a, b):\n    return a + b"
    upstream.plan(Behavior(text=f"Here you go:\n\n```python\n{code}\n```\n\nThat is all."))
    send(page, "show me code")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    expect(last_answer(page).locator(".codehilite")).to_have_count(1)
    page.get_by_role("button", name="Copy code").click()
    expect(page.get_by_role("button", name="Copy code")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()").strip() == code
