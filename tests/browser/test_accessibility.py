"""axe-core on every page and dialog a person meets, in light and in dark (issue 41): the chat page's states are in
``test_surface`` (empty, an answer, an error, the audit panel); here the presets page (its form, refused with an
error on a field, its versions), search, Compare, the file chips (one warning), the long-paste offer and the
message over the limit."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from tests.support.accessibility import axe_problems
from tests.support.app_process import AppProcess
from tests.support.browser import PASTE_TEXT, Pages, last_answer, load, send
from tests.support.upstream import Behavior, ScriptedUpstream


def themed(page: Page, app: AppProcess, theme: str, path: str = "/") -> None:
    """``path`` opened in ``theme`` (as chosen with the theme button: remembered in the browser)."""
    page.evaluate("t => localStorage.setItem('ledger-chat-theme', t)", theme)
    if path == "/presets":  # no message box there
        page.goto(f"{app.url}{path}")
    else:
        load(page, f"{app.url}{path}")
    page.wait_for_function("d => document.body.classList.contains('body--dark') === d", arg=theme == "dark")


def clean(page: Page, where: str, found: dict[str, list[str]]) -> None:
    problems = axe_problems(page)
    if problems:
        found[where] = problems


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_no_serious_accessibility_problem_on_the_presets_page_and_the_chat_pages_dialogs(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream, theme: str
) -> None:
    page = open_page(app)
    found: dict[str, list[str]] = {}
    themed(page, app, theme)
    for text in ("A first answer.", "A second answer, to compare."):
        upstream.plan(Behavior(text=text, chunk_delay=0.0))
        if text.startswith("A first"):
            send(page, "compare these")
        else:
            last_answer(page).get_by_role("button", name="Retry").click()
        expect(last_answer(page)).to_have_attribute("data-status", "complete")
    last_answer(page).get_by_role("button", name="Compare attempts side by side").click()
    expect(page.get_by_role("dialog").locator(".lc-compare-cols > *")).to_have_count(2)
    clean(page, "Compare", found)
    page.get_by_role("dialog").get_by_role("button", name="Close").click()
    expect(page.locator(".lc-compare")).to_have_count(0)

    page.keyboard.press("Control+K")
    page.get_by_role("textbox", name="Search chats").fill("compare")
    expect(page.get_by_role("dialog").get_by_text("compare these").first).to_be_visible()
    clean(page, "search", found)
    page.keyboard.press("Escape")

    page.locator("input.lc-file-input").first.set_input_files(
        [{"name": "blob.bin", "mimeType": "application/octet-stream", "buffer": bytes(range(256)) * 4}]
    )
    expect(page.locator(".lc-chip-delivery.lc-chip-warn")).to_be_visible()
    page.evaluate(PASTE_TEXT, "x" * 40_000)
    expect(page.get_by_role("dialog", name="Attach as a file?")).to_be_visible()
    clean(page, "a file chip that warns, the long-paste offer", found)
    page.keyboard.press("Escape")
    page.get_by_label("Message").fill("y" * 33_000)
    expect(page.get_by_text("a message holds at most 32,000")).to_be_visible()
    clean(page, "a message over the limit", found)

    themed(page, app, theme, "/presets")
    page.get_by_role("button", name="New preset").click()
    expect(page.get_by_label("Name")).to_have_value("")
    clean(page, "the presets page", found)
    page.get_by_role("button", name="Save the preset").click()
    expect(page.get_by_role("alert").filter(has_text="Name: a preset")).to_be_visible()
    clean(page, "the presets page, refused", found)
    page.get_by_role("button", name="Open preset Default").click()
    page.get_by_text("Versions (").click()
    clean(page, "the presets page, versions", found)
    assert found == {}, json.dumps(found, indent=1)
