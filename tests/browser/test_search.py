"""Search across chats in real Chromium, on a desktop and on a touch phone: a result reads as plain words with the
query's words marked, and opening it shows the message that matched, in view and marked, however far back it lies,
and it stays there while the rest of the chat arrives around it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta

import pytest
from playwright.sync_api import Page, expect

from ledger.events import AnyEvent, Created
from store.tinydb.store import Store
from tests.support.app_process import AppProcess
from tests.support.app_runner import AppRunner
from tests.support.browser import Pages
from tests.support.ledger_builders import T0, TEST_PACE, stamp, turn_events
from ui.transcript import REACH

SCREENS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844, "touch": True}}
TURNS = 12  # 24 messages: the chat opens on its last 6 and grows to 16, so the first answer is never shown at first
LONG_TURNS = 80  # 160 messages: more than a chat opened from a search shows (ui.transcript.REACH)
FIRST_ANSWER = "Steel **bulkheads** keep a ship afloat when one compartment floods."


def planted() -> list[AnyEvent]:
    events: list[AnyEvent] = [Created(conversation_id="ship", ts=stamp(T0), title="Ships")]
    for turn in range(1, TURNS + 1):
        text = FIRST_ANSWER if turn == 1 else f"Filler answer {turn}, long enough to take a line. " * 6
        at = T0 + timedelta(minutes=turn)
        events += turn_events("ship", turn, [text], at=at, question=f"question {turn}", pace=TEST_PACE)
    events.append(Created(conversation_id="long", ts=stamp(T0), title="A long chat"))
    for turn in range(1, LONG_TURNS + 1):
        text = "The quayside was quiet." if turn == 1 else f"Answer {turn}."
        at = T0 + timedelta(hours=1, minutes=turn)
        events += turn_events("long", turn, [text], at=at, question=f"ask {turn}", pace=TEST_PACE)
    return events


@pytest.fixture(scope="module")
def app(run_app: AppRunner, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    data = tmp_path_factory.mktemp("search") / "data"
    store = Store.open(data)
    for event in planted():
        store.append(event)
    store.close()
    with run_app(data=data) as process:
        yield process


HIGHLIGHTED = "() => [...(CSS.highlights.get('lc-hit') || [])].map(r => r.toString())"
FIRST_IN_VIEW = """() => { const r = [...(CSS.highlights.get('lc-hit') || [])][0]?.getBoundingClientRect();
  return !!r && r.height > 0 && r.bottom > 0 && r.top < innerHeight; }"""


def highlighted(page: Page, *words: str) -> None:
    """The page highlights exactly ``words`` (in order), inside the message the search found."""
    page.wait_for_function(f"w => JSON.stringify(({HIGHLIGHTED})()) === JSON.stringify(w)", arg=list(words))
    inside = (
        "() => [...CSS.highlights.get('lc-hit')].every(r => r.startContainer.parentElement.closest('[data-lc-found]'))"
    )
    assert page.evaluate(inside)


def search(page: Page, query: str, touch: bool) -> None:
    if touch:
        page.get_by_role("button", name="Chats").tap()
        page.get_by_role("button", name="Search chats (Ctrl+K)").tap()
    else:
        page.get_by_role("button", name="Search chats (Ctrl+K)").click()
    page.get_by_label("Search chats", exact=True).fill(query)


@pytest.mark.parametrize("screen", ["desktop", "phone"])
def test_a_result_reads_as_plain_words_with_the_query_marked_and_opens_at_its_match_far_back_in_the_chat(
    open_page: Pages, app: AppProcess, screen: str
) -> None:
    touch = screen == "phone"
    page = open_page(app, **SCREENS[screen])
    search(page, "bulkheads", touch)
    result = page.locator(".q-dialog .q-btn").filter(has_text="bulkheads").first
    expect(result).to_contain_text("Steel bulkheads keep a ship afloat")  # the words, not the markdown
    assert "**" not in result.inner_text()
    expect(result.locator("mark.lc-hit")).to_have_text("bulkheads")
    result.tap() if touch else result.click()
    page.wait_for_url("**/chat/ship")
    found = page.locator("[data-lc-found]")
    expect(found).to_contain_text("Steel bulkheads keep a ship afloat")
    highlighted(page, "bulkheads")
    page.wait_for_function(FIRST_IN_VIEW)
    expect(page.locator(".lc-user")).to_have_count(TURNS)  # the rest of the chat arrived below it, and above none
    expect(page.locator(".lc-assistant").last).not_to_be_in_viewport()  # it did not jump to the latest answer
    page.wait_for_timeout(2500)  # a named window, longer than the 2 s the page holds the view: it stays at the match
    assert page.evaluate(FIRST_IN_VIEW)


def test_a_search_of_two_words_apart_marks_both_in_the_result_and_in_the_message(
    open_page: Pages, app: AppProcess
) -> None:
    page = open_page(app, **SCREENS["desktop"])
    search(page, "keep afloat", touch=False)
    result = page.locator(".q-dialog .q-btn").filter(has_text="afloat").first
    expect(result.locator("mark.lc-hit")).to_have_text(["keep", "afloat"])
    page.get_by_label("Search chats", exact=True).press("Enter")
    page.wait_for_url("**/chat/ship")
    highlighted(page, "keep", "afloat")
    page.wait_for_function(FIRST_IN_VIEW)


def test_a_match_further_back_than_a_page_shows_says_how_to_reach_it_and_the_page_stays_bounded(
    open_page: Pages, app: AppProcess
) -> None:
    page = open_page(app, **SCREENS["desktop"])
    search(page, "quayside", touch=False)
    page.get_by_label("Search chats", exact=True).press("Enter")
    page.wait_for_url("**/chat/long")
    expect(page.locator(".q-notification")).to_contain_text("further back than a chat opened from a search shows")
    expect(page.locator(".lc-user")).to_have_count(REACH // 2)  # what the page shows stays bounded
    expect(page.get_by_role("button", name=re.compile(r"Show \d+ earlier messages"))).to_be_visible()
