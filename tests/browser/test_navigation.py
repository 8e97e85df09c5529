"""Moving between chats in real Chromium: in place (no reload), the URL follows, Back and Forward work, each
chat keeps its unsent draft."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.support.app_process import AppProcess
from tests.support.browser import Pages, conversation_id, last_answer, new_chat, send
from tests.support.upstream import Behavior, ScriptedUpstream


def chat_with(page: Page, upstream: ScriptedUpstream, question: str, answer: str) -> str:
    upstream.plan(Behavior(text=answer))
    send(page, question)
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    return conversation_id(page)


def same_document(page: Page) -> bool:
    """Whether the page is still the document marked by ``mark_document`` (no reload happened)."""
    return bool(page.evaluate("() => window.__lcSameDocument === true"))


def test_switching_chats_happens_in_place_the_url_follows_and_back_returns_with_the_draft(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    page = open_page(app)
    first = chat_with(page, upstream, "first question", "alpha answer")
    new_chat(page, app)
    second = chat_with(page, upstream, "second question", "beta answer")
    page.evaluate("() => { window.__lcSameDocument = true; }")

    page.locator(f"[data-conversation='{first}']").click()
    page.wait_for_url(f"**/chat/{first}")
    expect(last_answer(page)).to_contain_text("alpha answer")
    expect(page.get_by_text("beta answer")).to_have_count(0)
    expect(page).to_have_title("first question · Ledger Chat")
    page.get_by_label("Message").fill("a draft I did not send")

    page.locator(f"[data-conversation='{second}']").click()
    page.wait_for_url(f"**/chat/{second}")
    expect(last_answer(page)).to_contain_text("beta answer")
    expect(page.get_by_label("Message")).to_have_value("")

    page.go_back()
    page.wait_for_url(f"**/chat/{first}")
    expect(last_answer(page)).to_contain_text("alpha answer")
    expect(page.get_by_label("Message")).to_have_value("a draft I did not send")
    page.go_forward()
    page.wait_for_url(f"**/chat/{second}")
    expect(last_answer(page)).to_contain_text("beta answer")
    assert same_document(page)
    current = page.locator(f"[data-conversation='{second}']").get_by_role("link")
    expect(current).to_have_attribute("aria-current", "page")

    page.reload()  # the URL it followed is a real one
    expect(last_answer(page)).to_contain_text("beta answer")


def test_a_chat_in_the_list_is_a_real_link_and_its_title_shows_as_plain_text(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    page = open_page(app)
    title = "<img src=x onerror=self.lcOwned=1><b>b</b>"
    cid = chat_with(page, upstream, title, "gamma answer")
    row = page.locator(f"[data-conversation='{cid}']")
    expect(row.get_by_role("link")).to_have_text(title)
    assert row.locator("img, b").count() == 0 and page.evaluate("() => self.lcOwned") is None
    expect(row.get_by_role("button", name="Rename")).to_be_visible()
    expect(row.get_by_role("link")).to_have_attribute("href", f"/chat/{cid}")

    page.get_by_role("button", name="New chat").click()
    page.wait_for_url(app.url + "/")
    with page.context.expect_page() as opened:  # Ctrl+click: the browser's own new tab, this page stays
        row.get_by_role("link").click(modifiers=["Control"])
    tab = opened.value
    expect(last_answer(tab)).to_contain_text("gamma answer")
    assert page.url == app.url + "/"
    tab.close()


def test_on_a_phone_choosing_a_chat_in_the_drawer_closes_it_and_shows_the_chat(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    page = open_page(app, width=390, height=800)
    cid = chat_with(page, upstream, "phone question", "delta answer")
    page.goto(app.url + "/")  # the list is a closed drawer here
    page.get_by_role("button", name="Chats").click()
    link = page.locator(f"[data-conversation='{cid}']").get_by_role("link")
    expect(link).to_be_in_viewport()
    link.click()
    page.wait_for_url(f"**/chat/{cid}")
    expect(last_answer(page)).to_contain_text("delta answer")
    expect(link).not_to_be_in_viewport()  # the drawer slid away


def test_a_long_chat_opens_on_its_latest_answer_then_fills_sixteen_messages_above_without_moving(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    page = open_page(app, height=600)
    for n in range(1, 13):
        cid = chat_with(page, upstream, f"question {n}", f"answer {n}")
    page.get_by_role("button", name="New chat").click()
    page.wait_for_url(app.url + "/")
    for opened in ("in place", "by its address"):
        if opened == "in place":
            page.locator(f"[data-conversation='{cid}']").get_by_role("link").click()
        else:
            page.goto(f"{app.url}/chat/{cid}")
        expect(last_answer(page)).to_contain_text("answer 12")
        expect(page.locator(".lc-user")).to_have_count(8)  # 16 messages: questions 5 to 12
        expect(page.locator(".lc-user").first).to_contain_text("question 5")
        expect(last_answer(page)).to_be_in_viewport()  # the view stayed on the latest answer
        expect(page.get_by_role("button", name="Show 8 earlier messages")).to_have_count(1)
