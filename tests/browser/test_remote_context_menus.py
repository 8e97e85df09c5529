"""The "/" menu with remote servers a person added in the Tools panel, in real Chromium with the keyboard alone: the
demo tool server over streamable HTTP (no sign-in) offers its prompts there once added; a server behind a real
OAuth authorization server (``tests.support.oauth_upstream``) whose sign-in is still waiting is one line, "Sign in
to notes to use its prompts", that is read but never chosen."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.engine.test_remote_context import serve_http
from tests.support.app_process import AppProcess
from tests.support.browser import ANSWER, Pages
from tests.support.oauth_upstream import OAuthUpstream
from tests.support.upstream import Behavior, ScriptedUpstream


@pytest.fixture(scope="module")
def demo_http() -> Iterator[str]:
    yield from serve_http("demo.tools_server")


def add(page: Page, name: str, url: str) -> None:
    page.get_by_text("Add a tool server").click()
    page.get_by_role("textbox", name="Name").fill(name)
    page.get_by_role("textbox", name="Streamable-HTTP URL").fill(url)
    page.get_by_role("button", name="Add the server").click()


def test_a_remote_servers_prompt_is_in_the_slash_menu_and_a_server_to_sign_in_to_is_a_line(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream, oauth: OAuthUpstream, demo_http: str
) -> None:
    page = open_page(app)
    page.wait_for_function("() => window.did_handshake === true")
    add(page, "docs", demo_http)
    expect(page.locator("[data-remote-server='docs']")).to_contain_text("calculator")  # connected: tools listed
    add(page, "notes", oauth.url)
    expect(page.locator("[data-remote-server='notes']").get_by_role("link", name="Sign in to notes")).to_be_visible()

    box = page.get_by_label("Message")
    box.focus()
    box.press("/")
    menu = page.get_by_role("listbox", name="Prompts")
    expect(menu.get_by_role("option", name="Stand-up")).to_contain_text("docs")
    line = menu.get_by_role("option", name="Sign in to notes to use its prompts")
    expect(line).to_have_attribute("aria-disabled", "true")
    box.press_sequentially("sign")  # (a space would end the "/" word)
    expect(menu.get_by_role("option")).to_have_count(1)
    box.press("Enter")  # a line to read, not to choose: nothing is inserted, the menu stays
    expect(line).to_be_visible()
    expect(page.locator("[data-lc-main-tray] .lc-chip")).to_have_count(0)

    box.press("Escape")
    box.fill("")
    box.press_sequentially("/stand")
    expect(menu.get_by_role("option")).to_have_count(1)
    box.press("Enter")
    expect(page.locator("[data-lc-main-tray] .lc-chip")).to_contain_text("from prompt docs/standup")
    upstream.plan(Behavior(text="Here is your stand-up."))
    box.press("Enter")
    expect(page.locator(ANSWER).last).to_contain_text("Here is your stand-up.")
    users = [m for m in upstream.last.raw["messages"] if m["role"] == "user"]
    assert "**user:** Write my stand-up" in json.dumps(users[-1]["content"])
