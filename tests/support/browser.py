"""Driving the real page in headless Chromium (Playwright, Debian's chromium): open, send, read, watch.

Used by the browser suite, the screenshots script and the benches, so that all of them open the page and press
Send the same way. Guarantees: ``new_page`` (behind the ``open_page`` fixture) is the one page opener and returns
a page whose socket is connected; every wait is on a DOM condition; ``watch_unchanged`` is the named "nothing
more appears" window.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from playwright.sync_api import ConsoleMessage, Locator, Page, WebSocket, WebSocketRoute, expect

from tests.support.app_process import AppProcess
from tests.support.contexts import ContextKey, Contexts, Lent, new_context
from tests.support.upstream import Behavior, ScriptedUpstream

ANSWER = ".lc-assistant"


PASTE_TEXT = """(text) => {
  const data = new DataTransfer();
  data.setData('text/plain', text);
  const box = document.querySelector('.lc-composer textarea');
  box.focus();
  box.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
}"""  # page.evaluate(PASTE_TEXT, text): a paste into the message box, as the clipboard gives it
PAGE_TIMEOUT_MS = 30_000  # a page's actions and navigations wait this long (conditions, not bounds: a passing test
# waits only as long as the condition takes; the test workers share 2 cores)


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
    try:
        expect(page.locator(ANSWER)).to_have_count(answers + 1)
    except AssertionError as exc:  # say what the page said instead
        said = page.locator(".q-notification").all_inner_texts()
        raise AssertionError(f"no answer after Send; the page said {said}; the box: {box.input_value()!r}") from exc


def answered(page: Page, upstream: ScriptedUpstream, question: str, text: str) -> None:
    """``question`` sent, answered with ``text`` in one piece; returns once the answer reads complete."""
    upstream.plan(Behavior(text=text, chunk_delay=0.0))
    send(page, question)
    expect(last_answer(page)).to_have_attribute("data-status", "complete")


def new_chat(page: Page, app: AppProcess) -> None:
    """Press New chat and wait until the empty chat is on screen: its address alone may change before the old
    chat's answers leave the page, and a Send counted against those would wait for an answer too many."""
    page.get_by_role("button", name="New chat").click()
    page.wait_for_url(app.url + "/")
    expect(page.locator(ANSWER)).to_have_count(0)


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


def new_page(
    browser: Any,
    url: str | None,
    width: int = 1200,
    height: int = 900,
    *,
    timeout_ms: int = PAGE_TIMEOUT_MS,
    permissions: Sequence[str] = (),
    init_script: str | None = None,
    route: Callable[[WebSocketRoute], None] | None = None,
    touch: bool = False,
) -> Page:
    """A tab in a fresh browser context (``permissions`` granted, ``init_script`` run before any page script, the
    page's websocket passed through ``route``), then ``url`` loaded with ``load``; with ``url=None`` the tab stays
    blank (a test that must watch the first load attaches its listeners first, then calls ``load``); ``touch``
    makes it a phone (touch events, no hover). The benches' opener; tests open pages with ``Pages``."""
    context = new_context(browser, ContextKey.of(width, height, touch, permissions))
    return prepared(context.new_page(), url, timeout_ms=timeout_ms, init_script=init_script, route=route)


def prepared(
    page: Page,
    url: str | None,
    *,
    timeout_ms: int,
    init_script: str | None,
    route: Callable[[WebSocketRoute], None] | None,
) -> Page:
    """``page`` with its timeout, init script and websocket route set, then ``url`` loaded (if any)."""
    page.set_default_timeout(timeout_ms)
    if init_script is not None:
        page.add_init_script(init_script)
    if route is not None:
        page.route_web_socket(re.compile(r".*/_nicegui_ws/.*"), route)
    return page if url is None else load(page, url)


def load(page: Page, url: str) -> Page:
    """Go to ``url`` and return once the page is ready for typing: the message box shows and the page's socket
    has connected (its handshake is done)."""
    page.goto(url)
    expect(page.get_by_label("Message")).to_be_visible()
    page.wait_for_function("() => window.did_handshake === true")
    return page


class Pages:
    """The pages one test opens: each in a context of its own for this test, lent by the process's ``Contexts``
    (so the app sees as many browsers as pages, as with a fresh context each); ``close`` gives them back clean."""

    def __init__(self, contexts: Contexts) -> None:
        self.contexts = contexts
        self.lent: list[Lent] = []
        self.diary: list[str] = []  # what a failed test's report shows (``tests/conftest.py``): see ``_keep_diary``
        self.start = time.monotonic()

    def __call__(
        self,
        app: AppProcess | None,
        path: str = "/",
        width: int = 1200,
        height: int = 900,
        *,
        timeout_ms: int = PAGE_TIMEOUT_MS,
        permissions: Sequence[str] = (),
        init_script: str | None = None,
        route: Callable[[WebSocketRoute], None] | None = None,
        touch: bool = False,
    ) -> Page:
        """A page on ``app`` at ``path`` (a blank tab with ``app=None``), ready for typing; the options as for
        ``new_page``."""
        lent = self.contexts.take(ContextKey.of(width, height, touch, permissions))
        self.lent.append(lent)
        url = None if app is None else app.url + path
        page = self._keep_diary(lent.watch(lent.context.new_page()), len(self.lent))
        return prepared(page, url, timeout_ms=timeout_ms, init_script=init_script, route=route)

    def _keep_diary(self, page: Page, number: int) -> Page:
        """Note the page's loads, its sockets opening and closing, and its console's errors and warnings (NiceGUI
        logs there when it reloads a page whose socket came back too late): what a failure on a busy machine is
        read with."""

        def note(what: str) -> None:
            self.diary.append(f"{time.monotonic() - self.start:8.3f} s  page {number}: {what}")

        def socket(ws: WebSocket) -> None:
            note(f"socket opened {ws.url[:120]}")
            ws.on("close", lambda _: note("socket closed"))

        def console(message: ConsoleMessage) -> None:
            if message.type in ("error", "warning") or "reload" in message.text:
                note(f"console {message.type}: {message.text[:300]}")

        page.on("framenavigated", lambda frame: note(f"loaded {frame.url}") if frame == page.main_frame else None)
        page.on("websocket", socket)
        page.on("console", console)
        page.on("crash", lambda _: note("crashed"))
        return page

    def close(self) -> None:
        for lent in self.lent:
            self.contexts.give_back(lent)
        self.lent.clear()
