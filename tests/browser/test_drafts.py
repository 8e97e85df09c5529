"""A draft survives a reload, per chat, and is forgotten once sent or once its chat is deleted (issue 41: "a draft is
lost on reload"; the deleted chat's draft was left in the browser's storage)."""

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


DRAFTS = "() => Object.keys(localStorage).filter((k) => k.startsWith('lc-draft:'))"


def test_deleting_a_chat_forgets_its_draft_in_this_browser_and_keeps_the_other_chats_drafts(
    page: Page, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    chats = []
    for word in ("first", "second"):
        page.goto(f"{app.url}/")
        upstream.plan(Behavior(text=f"The {word} answer."))
        page.get_by_label("Message").fill(f"the {word} chat")
        page.get_by_label("Message").press("Enter")
        expect(last_answer(page)).to_have_attribute("data-status", "complete")
        chats.append(conversation_id(page))
        page.get_by_label("Message").fill(f"a private draft in the {word} chat")
    page.wait_for_function(f"() => ({DRAFTS})().length === 2")
    doomed, kept = chats
    page.locator(f"[data-conversation='{doomed}']").get_by_role("button", name="Delete").click()
    page.get_by_role("dialog").get_by_role("button", name="Delete").click()
    expect(page.locator(f"[data-conversation='{doomed}']")).to_have_count(0)
    page.wait_for_function(f"() => ({DRAFTS})().length === 1")
    assert page.evaluate(DRAFTS) == [f"lc-draft:/chat/{kept}"]
    assert page.evaluate(f"localStorage.getItem('lc-draft:/chat/{kept}')") == "a private draft in the second chat"
