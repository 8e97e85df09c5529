"""Issue 25, live markdown, in headless Chromium: the growing tail is rendered as it arrives, math is MathML drawn
by the browser itself, nothing remote loads, and a completed answer shows exactly the text received.

The upstream stalls mid-paragraph (``stall_after``), so the DOM is read while the answer is still streaming and
the text is still the tail (no blank line has closed its block).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, expect

from demo.stream import WORD
from tests.support.app_process import AppProcess
from tests.support.browser import Pages, conversation_id, last_answer, send
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until_blocking

TAIL = ".lc-body .lc-stream > .lc-tail"
LIVE = "Intro.\n\nThe tail has **bold words**, $e^{i\\pi} + 1 = 0$, `search_notes` and https://example.org/docs and on"


def requests_of(page: Page) -> list[str]:
    seen: list[str] = []
    page.on("request", lambda r: seen.append(r.url))
    return seen


def stop(page: Page) -> None:
    page.get_by_role("button", name="Stop").click()
    expect(last_answer(page)).not_to_have_attribute("data-status", "streaming")


def test_the_growing_tail_shows_bold_math_code_and_links_rendered_mid_stream_and_loads_nothing_remote(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    page = open_page(app)
    seen = requests_of(page)
    upstream.plan(Behavior(text=LIVE + " and on " * 20, chunk_delay=0.01, stall_after=17))
    send(page, "render as you go")
    answer = last_answer(page)
    tail = answer.locator(TAIL)
    expect(tail.locator("strong")).to_have_text("bold words")
    expect(answer).to_have_attribute("data-status", "streaming")
    expect(tail.locator("code")).to_have_text("search_notes")
    expect(tail.get_by_role("link", name="https://example.org/docs")).to_have_attribute(
        "href", "https://example.org/docs"
    )
    math = tail.locator("math")
    expect(math).to_have_count(1)
    assert math.evaluate("m => m.namespaceURI") == "http://www.w3.org/1998/Math/MathML"
    laid_out = "s => [...document.querySelectorAll(s)].pop()?.getBoundingClientRect().width > 20"
    page.wait_for_function(laid_out, arg=f".lc-assistant {TAIL} math")  # the browser lays the MathML out (a re-render
    # of the tail may put a fresh element in place of the one found first, not yet laid out when it is read)
    assert "π" in (math.text_content() or "")
    shown = tail.inner_text()
    assert "**" not in shown and "$" not in shown and "`" not in shown
    assert answer.locator(".lc-body").inner_text().startswith("Intro.")
    stop(page)
    origin = urlsplit(app.url).netloc
    assert [u for u in seen if urlsplit(u).netloc not in (origin, "")] == [], "nothing loaded from another host"


@pytest.mark.parametrize(("width", "height"), [(1280, 800), (390, 844)])
def test_half_written_bold_shows_bold_while_it_streams_on_a_desk_and_a_phone_width(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream, width: int, height: int
) -> None:
    page = open_page(app, width=width, height=height)
    upstream.plan(Behavior(text="Now **half written bold that goes on and on", chunk_delay=0.01, stall_after=4))
    send(page, "stop in the middle of bold")
    tail = last_answer(page).locator(TAIL)
    expect(tail.locator("strong")).to_contain_text("half written")
    assert "**" not in tail.inner_text()
    stop(page)


def test_a_completed_answer_shows_exactly_the_text_received_no_twin_markers(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    page = open_page(app)
    text = "Python: self.__secret is name-mangled.\n\nA lone ` backtick and an *unmatched star.\n\nCheck self.__x"
    upstream.plan(Behavior(text=text, chunk_delay=0.005))
    send(page, "exactly")
    answer = last_answer(page)
    expect(answer).to_have_attribute("data-status", "complete")
    body = answer.locator(".lc-body")
    shown = [line for line in body.inner_text().splitlines() if line.strip()]
    assert shown == text.split("\n\n")
    assert [e["text"] for e in app.export(conversation_id(page), having="persisted") if e["kind"] == "persisted"][
        -1
    ] == text


def test_task_lists_show_disabled_checkboxes_in_the_tail_and_once_finished(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    page = open_page(app)
    upstream.plan(Behavior(text="- [x] done thing\n- [ ] open thing\n\nAfter.", chunk_delay=0.005))
    send(page, "a checklist")
    answer = last_answer(page)
    expect(answer).to_have_attribute("data-status", "complete")
    boxes = answer.locator(".lc-body input[type=checkbox]")
    expect(boxes).to_have_count(2)
    assert [b.is_checked() for b in boxes.all()] == [True, False]
    assert all(b.is_disabled() for b in boxes.all())
    expect(answer.locator(".lc-body")).not_to_contain_text("[x]")


def test_a_growing_tables_rows_each_show_their_own_cells_in_the_tail(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    rows = [[f"r{n:02d}", str(n * 7), f"w{n % 5}"] for n in range(40)]  # the rows after the first come as repeats
    table = "| name | n | word |\n|---|---:|---|\n" + "\n".join(f"| {a} | {b} | {c} |" for a, b, c in rows)
    page = open_page(app)
    upstream.plan(Behavior(text=table + "\n| late | 1 | x |", chunk_delay=0.005, stall_after=len(WORD.findall(table))))
    send(page, "a table, please")
    cells = last_answer(page).locator(TAIL).locator("tbody tr")
    expect(cells).to_have_count(len(rows))
    expect(cells.last.locator("td").last).to_have_text(rows[-1][-1])  # the last row whole (its pieces all came)
    assert [r.split("\t") for r in cells.evaluate_all("rs => rs.map(r => r.innerText)")] == rows
    stop(page)


DOTS_MOVING = "() => document.getAnimations().filter((a) => a.animationName === 'lc-blink').length"


def test_the_typing_dots_stand_still_while_text_flows_and_move_again_with_the_waiting_hint_after_a_pause(
    page: Page, upstream: ScriptedUpstream
) -> None:
    upstream.plan(
        Behavior(text="flowing " * 2000, chunk_delay=0.05),  # words for 100 s: still coming whenever it is checked
        Behavior(text="paused " * 400, chunk_delay=0.05, stall_after=5),  # a few words, then silence
    )
    send(page, "words that keep coming")
    answer = last_answer(page)
    expect(answer).to_contain_text("flowing")
    dots = answer.get_by_role("img", name="Answer streaming")
    expect(dots).to_be_visible()  # still there while the words come, drawn still (no frame a second for them)
    page.wait_for_function(f"() => ({DOTS_MOVING})() === 0 && document.body.innerText.includes('flowing')")
    seen = answer.inner_text().count("flowing")
    wait_until_blocking(lambda: answer.inner_text().count("flowing") > seen, what="words after the dots stood still")
    stop(page)
    send(page, "words, then a long pause")
    answer = last_answer(page)
    expect(answer).to_contain_text("paused")
    hint = answer.get_by_text(re.compile(r"waiting for the provider… \d+ s"))
    expect(hint).to_be_visible(timeout=15_000)
    assert page.evaluate(f"({DOTS_MOVING})()") == 3, "after a pause the three dots move again"
    stop(page)


def test_a_quote_nested_250_deep_ends_its_stream_shows_its_words_and_its_chat_opens_again(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    """Issue 42: markdown2 raised RecursionError on this 261-byte answer: the tab stayed on Stop, each open a 500."""
    page = open_page(app)
    text = ">" * 250 + " deep quote"
    upstream.plan(Behavior(text=text, chunk_delay=0.005))
    send(page, "a very deep quote")
    answer = last_answer(page)
    expect(answer).to_have_attribute("data-status", "complete")
    expect(page.get_by_role("button", name="Stop")).to_have_count(0)
    expect(answer.get_by_role("img", name="Answer streaming")).to_have_count(0)
    expect(answer.locator(".lc-body")).to_contain_text("deep quote")
    cid = conversation_id(page)
    response = page.goto(f"{app.url}/chat/{cid}")
    assert response is not None and response.status == 200
    reopened = last_answer(page)
    expect(reopened).to_have_attribute("data-status", "complete")
    expect(reopened.locator(".lc-body")).to_contain_text("deep quote")
    expect(reopened.locator(".lc-body blockquote").first).to_be_visible()
