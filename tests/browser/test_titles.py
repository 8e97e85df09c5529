"""Titles in a real browser (the real app with ``--titles model``, headless Chromium, the scripted upstream): after
the first answer the chat list row and the header show the title the model gave, live, in this tab and another;
the audit panel shows the title's own attempt."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.support.app_process import AppProcess
from tests.support.browser import Pages, conversation_id, last_answer, open_audit, send
from tests.support.upstream import Behavior, ScriptedUpstream

QUESTION = "Tell me about caching in Python #drop"


@pytest.fixture(scope="module")
def app_options() -> tuple[str, ...]:
    return ("--titles", "model")


def test_after_the_first_answer_the_list_and_the_header_show_the_generated_title_live_in_every_tab(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    other = open_page(app, width=1280, height=800)  # open before the chat exists: it is never reloaded
    page = open_page(app, width=1280, height=800)
    upstream.plan(Behavior(text="Caches keep results.", chunk_delay=0.0), Behavior(text='"Caching in Python."'))
    send(page, QUESTION)
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    cid = conversation_id(page)
    for tab in (page, other):
        row = tab.locator(f"[data-conversation='{cid}']").get_by_role("link")
        expect(row).to_have_text("Caching in Python", timeout=15_000)
    expect(page.locator(".lc-chat-title")).to_have_text("Caching in Python")
    expect(page.locator(".lc-assistant")).to_have_count(1)  # the title is not a message
    assert len(upstream.records) == 2 and "#drop" not in str(upstream.records[1].messages)
    open_audit(page)
    expect(page.get_by_text("Chat title · Turn").first).to_be_visible()  # its own attempt in the audit panel
