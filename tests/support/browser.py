"""Driving the real page in headless Chromium (Playwright, Debian's chromium): send, read, watch.

Used by the browser suite, the screenshots script and the websocket bench, so that all three press Send the
same way. Every wait is on a DOM condition; ``watch_unchanged`` is the named "nothing more appears" window.
"""

from __future__ import annotations

import time
from typing import Any

from playwright.sync_api import Locator, Page, expect

ANSWER = ".lc-assistant"


def send(page: Page, text: str) -> None:
    """Type and press Enter; return once the new answer's element is on the page (so ``last_answer`` is it). Waits
    for the page's socket first: before it connects, the browser holds the box's text and the key in two queues
    that may reach the server in either order, and Enter with a box the server still sees empty sends nothing (the
    text stays in the box; a person presses Enter again)."""
    page.wait_for_function("() => window.did_handshake === true")
    answers = page.locator(ANSWER).count()
    box = page.get_by_label("Message")
    box.fill(text)
    box.press("Enter")
    expect(page.locator(ANSWER)).to_have_count(answers + 1)


def last_answer(page: Page) -> Locator:
    return page.locator(ANSWER).last


def visible_words(page: Page) -> list[str]:
    answer = page.locator(f"{ANSWER} .lc-body").last
    return answer.inner_text().split() if answer.count() else []


def wait_words(page: Page, at_least: int) -> None:
    page.wait_for_function(
        "n => { const b = [...document.querySelectorAll('.lc-assistant .lc-body')].pop();"
        " return b && b.innerText.split(/\\s+/).filter(Boolean).length >= n; }",
        arg=at_least,
    )


def watch_unchanged(page: Page, seconds: float = 1.0) -> list[str]:
    """A "nothing more appears" window: sample the last answer every 50 ms; fail if a single word is added."""
    first = visible_words(page)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        page.wait_for_timeout(50)
        assert visible_words(page) == first, "text changed after it should have stopped"
    return first


def conversation_id(page: Page) -> str:
    page.wait_for_url("**/chat/*")
    return page.url.rsplit("/", 1)[-1]


def open_audit(page: Page) -> None:
    page.get_by_role("button", name="Audit panel").click()
    expect(page.locator(".lc-audit-card").first).to_be_visible()


def new_page(browser: Any, url: str, width: int = 1200, height: int = 900) -> Page:
    """A page in a fresh browser context, opened at ``url`` and ready for typing."""
    context = browser.new_context(viewport={"width": width, "height": height})
    page: Page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(url)
    expect(page.get_by_label("Message")).to_be_visible()
    return page
