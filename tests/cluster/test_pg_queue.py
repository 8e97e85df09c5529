"""Two real app processes on one PostgreSQL, a Chromium tab on each: a message queued on one instance shows on the
other, and Send now pressed in both tabs at once sends it once (the ledger in the database and the upstream's
request log prove it)."""

from __future__ import annotations

import contextlib

from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

from tests.support.browser import Pages, conversation_id, last_answer, send, wait_words
from tests.support.instances import AppsOnOneDatabase
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import nothing_more_for_blocking, wait_until_blocking

STORY = " ".join(f"w{n}" for n in range(800))
SLOW_MS = 20_000  # two instances, two tabs: a page's waits on a busy machine


def test_send_now_pressed_on_two_instances_at_once_sends_the_queued_message_once(
    pair: AppsOnOneDatabase, open_page: Pages, upstream: ScriptedUpstream
) -> None:
    on_a = open_page(pair.a)
    upstream.plan(Behavior(text=STORY, chunk_delay=0.02), Behavior(text="sent once"), Behavior(text="sent twice"))
    send(on_a, "tell a long story")
    cid = conversation_id(on_a)
    pair.holding(cid)
    on_b = open_page(pair.b, f"/chat/{cid}")
    wait_words(on_b, 10)
    box = on_a.get_by_label("Message")
    box.fill("queued on A")
    box.press("Enter")
    expect(on_b.locator(".lc-queued", has_text="queued on A")).to_be_visible(timeout=SLOW_MS)
    on_a.get_by_role("button", name="Stop").click()
    buttons = [page.get_by_role("button", name="Send now") for page in (on_a, on_b)]
    for button in buttons:
        expect(button).to_be_visible(timeout=SLOW_MS)
    for button in buttons:  # one right after the other; the first may have sent it before the second tab is clicked
        with contextlib.suppress(PlaywrightTimeoutError):
            button.click(timeout=3_000)  # then that tab's button is gone already: sent once, which is the point
    wait_until_blocking(lambda: [k for k, _, _ in pair.rows(cid)].count("persisted") == 2, timeout=30)
    nothing_more_for_blocking(1.5)
    rows = pair.rows(cid)
    sent = [p["queue_id"] for k, _, p in rows if k == "submitted" and p.get("queue_id")]
    assert len(sent) == 1 and [k for k, _, _ in rows].count("started") == 2, "sent more than once"
    assert len(upstream.records) == 2 and upstream.records[1].messages[-1]["content"] == "queued on A"
    for page in (on_a, on_b):
        expect(page.locator(".lc-queued")).to_have_count(0, timeout=SLOW_MS)
        expect(last_answer(page)).to_contain_text("sent once", timeout=SLOW_MS)
