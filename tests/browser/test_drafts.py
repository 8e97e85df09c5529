"""A draft survives a reload, per chat, and is forgotten once sent (issue 41: "a draft is lost on reload")."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.support.app_process import AppProcess
from tests.support.browser import conversation_id, last_answer
from tests.support.upstream import Behavior, ScriptedUpstream


def test_a_draft_comes_back_after_a_reload_per_chat_and_is_gone_once_sent(
    page: Page, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    box = page.get_by_label("Message")
    box.fill("half a thought about caching")
    page.reload()
    expect(page.get_by_label("Message")).to_have_value("half a thought about caching")
    upstream.plan(Behavior(text="Caching, then."))
    page.get_by_label("Message").press("Enter")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    cid = conversation_id(page)
    page.get_by_label("Message").fill("a follow-up, not sent yet")
    page.reload()
    expect(page.get_by_label("Message")).to_have_value("a follow-up, not sent yet")  # this chat's own draft
    page.goto(f"{app.url}/")
    expect(page.get_by_label("Message")).to_have_value("")  # the sent one is not back in a new chat
    page.goto(f"{app.url}/chat/{cid}")
    expect(page.get_by_label("Message")).to_have_value("a follow-up, not sent yet")
    upstream.plan(Behavior(text="Done."))
    page.get_by_label("Message").press("Enter")  # the box as it came back
    expect(page.locator(".lc-user")).to_have_count(2)
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    page.reload()
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    expect(page.get_by_label("Message")).to_have_value("")
