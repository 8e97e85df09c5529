"""End-to-end edit, regenerate and branch: the real app, headless Chromium, the scripted upstream."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.support.app_process import AppProcess
from tests.support.browser import Pages, conversation_id, last_answer, send, visible_words, wait_words
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until_blocking

STORY = " ".join(f"w{n}" for n in range(600))


def answer(page: Page, n: int):  # the n-th answer shown (0-based), a Locator
    return page.locator(".lc-assistant").nth(n)


def ask(page: Page, upstream: ScriptedUpstream, text: str, reply: str) -> None:
    upstream.plan(Behavior(text=reply, chunk_delay=0.0))
    send(page, text)
    expect(last_answer(page)).to_have_attribute("data-status", "complete")


def test_editing_a_message_while_a_later_answer_streams_stops_it_and_the_edit_is_answered(
    page: Page, upstream: ScriptedUpstream
) -> None:
    ask(page, upstream, "first question", "first answer")
    upstream.plan(Behavior(text=STORY, chunk_delay=0.02), Behavior(text="answer to the edit", chunk_delay=0.0))
    send(page, "second question")
    wait_words(page, 5)
    first = page.locator(".lc-user").first
    first.get_by_role("button", name="Edit").click()
    box = first.get_by_label("Edit message")
    box.fill("first question, edited")
    first.get_by_role("button", name="Save").click()
    expect(page.locator(".lc-assistant")).to_have_count(1)
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    assert visible_words(page) == ["answer", "to", "the", "edit"]
    wait_until_blocking(lambda: upstream.records[-2].disconnected_at is not None, 5)
    assert upstream.last.messages == [{"role": "user", "content": "first question, edited"}]
    expect(page.locator(".lc-user").first).to_have_attribute("data-version", "2/2")
    page.get_by_role("button", name="Previous version").click()
    expect(page.locator(".lc-user")).to_have_count(2)
    expect(answer(page, 1)).to_have_attribute("data-status", "interrupted")
    expect(page.locator(".lc-user").first).to_contain_text("first question")


def test_regenerating_a_middle_answer_makes_a_branch_and_both_branches_can_be_browsed(
    page: Page, upstream: ScriptedUpstream
) -> None:
    for n in (1, 2, 3):
        ask(page, upstream, f"question {n}", f"answer {n}")
    upstream.plan(Behavior(text="answer 2 again", chunk_delay=0.0))
    answer(page, 1).get_by_role("button", name="Retry").click()
    expect(page.locator(".lc-assistant")).to_have_count(2)
    expect(answer(page, 1)).to_have_attribute("data-attempt", "2/2")
    expect(answer(page, 1)).to_have_attribute("data-status", "complete")
    expect(answer(page, 1)).to_contain_text("answer 2 again")
    assert [m["content"] for m in upstream.last.messages] == ["question 1", "answer 1", "question 2"]
    answer(page, 1).get_by_role("button", name="Previous attempt").click()
    expect(page.locator(".lc-assistant")).to_have_count(3)
    expect(answer(page, 1)).to_contain_text("answer 2")
    expect(answer(page, 2)).to_contain_text("answer 3")
    answer(page, 1).get_by_role("button", name="Next attempt").click()
    expect(page.locator(".lc-assistant")).to_have_count(2)


def settled_words(page: Page) -> list[str]:
    """The last answer's words once two looks 300 ms apart agree (a condition wait, at most 10 s)."""
    words: list[list[str]] = [visible_words(page)]

    def same_again() -> bool:
        page.wait_for_timeout(300)  # the poll interval of the condition
        words.append(visible_words(page))
        return words[-1] == words[-2]

    wait_until_blocking(same_again, timeout=10, what="the stopped answer's words to settle")
    return words[-1]


def test_branching_from_a_stopped_answer_opens_a_new_chat_that_continues_from_what_was_seen(
    page: Page, upstream: ScriptedUpstream
) -> None:
    upstream.plan(Behavior(text=STORY, chunk_delay=0.02))
    send(page, "tell me a story")
    source = conversation_id(page)
    wait_words(page, 6)
    page.get_by_role("button", name="Stop").click()
    expect(last_answer(page)).to_have_attribute("data-status", "interrupted")
    seen = settled_words(page)  # the status may reach the page a moment before the tail's last words
    last_answer(page).get_by_role("button", name="Branch").click()
    page.wait_for_url(lambda url: "/chat/" in url and source not in url)
    expect(page.locator("[data-testid=branched-from], .lc-meta").filter(has_text="Branched from").first).to_be_visible()
    expect(page.locator(".lc-chat-title")).to_have_text("tell me a story — branch from answer 1")
    assert visible_words(page) == seen
    upstream.plan(Behavior(text="continuing", chunk_delay=0.0))
    send(page, "go on from there")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    assert upstream.last.messages[1]["role"] == "assistant"
    assert upstream.last.messages[1]["content"].rstrip() == " ".join(seen)  # what was seen, to the last word
    page.goto(page.url.rsplit("/chat/", 1)[0] + f"/chat/{source}")
    expect(page.get_by_role("button", name="Branched into a new chat")).to_be_visible()


def test_on_a_phone_branch_on_your_own_message_opens_a_new_chat_that_says_so_with_the_text_in_the_box(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    page = open_page(app, width=390, height=844, touch=True)
    ask(page, upstream, "first question", "first answer")
    ask(page, upstream, "second question to rework", "second answer")
    source = conversation_id(page)
    page.locator(".lc-user").last.get_by_role("button", name="Branch").tap()
    page.wait_for_url(lambda url: "/chat/" in url and source not in url)
    expect(page.get_by_label("Message")).to_have_value("second question to rework")  # ready to change, no reload
    expect(page.locator(".lc-chat-title")).to_have_text("first question — branch from message 2")
    expect(page.get_by_text("You are in a new chat")).to_be_visible()
    expect(page.locator(".lc-user")).to_have_count(1)
    expect(page.get_by_role("button", name="New chat")).not_to_be_in_viewport()  # the drawer stays closed
    page.get_by_label("Message").fill("second question, reworked")
    upstream.plan(Behavior(text="reworked answer", chunk_delay=0.0))
    page.get_by_role("button", name="Send").tap()
    expect(last_answer(page)).to_contain_text("reworked answer")
    expect(page.locator(".lc-user")).to_have_count(2)
