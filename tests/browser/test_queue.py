"""End-to-end, in headless Chromium on the real app and the scripted upstream: messages queued while an answer
streams are shown under it, survive a reload, can be edited and removed, and are sent once, after the answer."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.support.app_process import AppProcess
from tests.support.browser import ANSWER, Pages, conversation_id, last_answer, load, send, wait_words
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import nothing_more_for_blocking, wait_until_blocking

STORY = " ".join(f"w{n}" for n in range(300))
LONG = 30_000  # ms: the first answer streams for about 9 s


def queue_by_enter(page: Page, text: str) -> None:
    box = page.get_by_label("Message")
    box.fill(text)
    box.press("Enter")
    expect(page.locator(".lc-queued", has_text=text)).to_be_visible()
    expect(box).to_have_value("")


def user_texts(page: Page) -> list[str]:
    return page.locator(".lc-user .lc-bubble").all_inner_texts()


def test_a_queued_message_survives_a_reload_and_is_sent_once_after_the_whole_answer(
    page: Page, upstream: ScriptedUpstream
) -> None:
    upstream.plan(Behavior(text=STORY, chunk_delay=0.03), Behavior(text="the queued answer"))
    send(page, "tell me a story")
    wait_words(page, 5)
    queue_by_enter(page, "and then a follow-up")
    expect(page.get_by_text("Queued: sent as the next message when this answer completes.")).to_be_visible()
    assert len(upstream.records) == 1, "a queued message waits for the answer"

    load(page, page.url)  # reload while the answer still streams: the queue is in the ledger
    expect(page.locator(".lc-queued", has_text="and then a follow-up")).to_be_visible()
    assert not upstream.records[0].finished, "the answer ended before the reload: the test proves nothing"

    expect(page.locator(ANSWER)).to_have_count(2, timeout=LONG)
    expect(last_answer(page)).to_contain_text("the queued answer")
    expect(page.locator(".lc-queued")).to_have_count(0)
    first, second = upstream.records[0], upstream.records[1]
    assert first.finished and second.messages[1:] == [
        {"role": "assistant", "content": STORY},
        {"role": "user", "content": "and then a follow-up"},
    ]
    nothing_more_for_blocking(1.0)
    assert len(upstream.records) == 2, "the queued message was sent more than once"
    assert user_texts(page) == ["tell me a story", "and then a follow-up"]


def test_a_queued_message_can_be_edited_and_removed_before_it_is_sent_and_a_second_tab_follows(
    page: Page, open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    upstream.plan(Behavior(text=STORY, chunk_delay=0.03), Behavior(text="answer to the edited one"))
    send(page, "tell me a story")
    wait_words(page, 5)
    page.get_by_label("Message").fill("a mesage with a typo")
    page.get_by_role("button", name="Queue", exact=True).click()
    expect(page.locator(".lc-queued", has_text="a mesage with a typo")).to_be_visible()
    queue_by_enter(page, "never mind this one")
    expect(page.get_by_text("2 queued: sent in order")).to_be_visible()
    other = open_page(app, f"/chat/{conversation_id(page)}")
    expect(other.locator(".lc-queued")).to_have_count(2)

    page.get_by_role("button", name="Edit queued").first.click()
    editor = page.get_by_label("Queued text")
    expect(editor).to_have_value("a mesage with a typo")
    editor.fill("a message, corrected")
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".lc-queued", has_text="a message, corrected")).to_be_visible()
    dropped = page.locator(".lc-queued", has_text="never mind this one")
    dropped.get_by_role("button", name="Remove from queue").click()
    expect(page.locator(".lc-queued")).to_have_count(1)
    expect(other.locator(".lc-queued")).to_have_count(1)
    expect(other.locator(".lc-queued", has_text="a message, corrected")).to_be_visible()
    assert len(upstream.records) == 1

    expect(page.locator(ANSWER)).to_have_count(2, timeout=LONG)
    expect(last_answer(page)).to_contain_text("answer to the edited one")
    nothing_more_for_blocking(1.0)
    assert len(upstream.records) == 2
    assert upstream.records[1].messages[-1] == {"role": "user", "content": "a message, corrected"}
    assert user_texts(page) == ["tell me a story", "a message, corrected"]
    expect(other.locator(".lc-queued")).to_have_count(0)
    expect(other.locator(".lc-user .lc-bubble")).to_have_text(["tell me a story", "a message, corrected"])


def test_stop_pauses_the_queue_and_send_now_sends_it(page: Page, upstream: ScriptedUpstream) -> None:
    upstream.plan(Behavior(text=STORY, chunk_delay=0.03), Behavior(text="sent when asked"))
    send(page, "tell me a story")
    wait_words(page, 5)
    queue_by_enter(page, "wait for me")
    page.get_by_role("button", name="Stop").click()
    expect(page.get_by_text("Queue paused: the answer was stopped.")).to_be_visible(timeout=15_000)
    nothing_more_for_blocking(1.0)
    assert len(upstream.records) == 1, "Stop must not send the queue"
    page.get_by_role("button", name="Send now").click()
    expect(page.locator(ANSWER)).to_have_count(2)
    expect(last_answer(page)).to_contain_text("sent when asked")
    expect(page.locator(".lc-queued")).to_have_count(0)
    wait_until_blocking(lambda: len(upstream.records) == 2)
    assert upstream.records[1].messages[-1] == {"role": "user", "content": "wait for me"}
