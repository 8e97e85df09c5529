"""The page on a 390×844 touch phone and from the keyboard, in real Chromium: the drawers get out of the way, the
audit panel is a sheet that closes, tooltips never stick, the chat list is one Tab stop, and a Send made before the
page's connection is live arrives exactly once."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
from playwright.sync_api import Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.support.app_process import AppProcess
from tests.support.browser import Pages, conversation_id, last_answer, load, new_chat
from tests.support.browser import answered as answered_in
from tests.support.latency_proxy import LatencyProxy
from tests.support.upstream import Behavior, ScriptedUpstream

PHONE, DESKTOP = (390, 844), (1280, 800)


def phone(open_page: Pages, app: AppProcess, path: str = "/") -> Page:
    return open_page(app, path, width=PHONE[0], height=PHONE[1], touch=True)


def answered(page: Page, upstream: ScriptedUpstream, question: str, text: str) -> str:
    """``tests.support.browser.answered``, and the chat's id."""
    answered_in(page, upstream, question, text)
    return conversation_id(page)


def no_sideways_scroll(page: Page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert width <= 0, f"the page is {width} px wider than the window"


def tappable(page: Page, name: str) -> None:
    """The control named ``name`` is the topmost element at its own centre (nothing lies over it)."""
    control = page.get_by_role("button", name=name, exact=True)
    expect(control).to_be_in_viewport()
    box = control.bounding_box()
    assert box is not None
    top = (
        "([x, y]) => document.elementFromPoint(x, y)?.closest('button')?.getAttribute('aria-label')"
        " || document.elementFromPoint(x, y)?.closest('button')?.innerText"
    )
    at = [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2]
    with contextlib.suppress(PlaywrightTimeoutError):  # a drawer still sliding away (its backdrop fading) passes
        page.wait_for_function(f"a => {{ const n = ({top})(a); return !!n && n.includes({name!r}); }}", arg=at)
    on_top = page.evaluate(top, at)
    assert on_top and name in on_top, f"{name} is covered by something else ({on_top!r})"


def open_chats(page: Page) -> None:
    page.get_by_role("button", name="Chats").tap()
    expect(page.get_by_role("button", name="New chat")).to_be_in_viewport()


def test_on_a_phone_new_chat_closes_the_drawer_and_the_composer_can_be_tapped_and_sends(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    page = phone(open_page, app)
    answered(page, upstream, "first phone question", "first phone answer")
    expect(page.locator(".lc-chat-title")).to_have_text("first phone question")
    expect(page.locator(".lc-user").first).to_contain_text("~5 tokens")  # its own 20 characters, not the prompt
    open_chats(page)
    page.get_by_role("button", name="New chat").tap()
    page.wait_for_url(app.url + "/")
    expect(page.get_by_role("button", name="New chat")).not_to_be_in_viewport()
    tappable(page, "Send")
    expect(page.get_by_role("button", name="Send")).to_be_disabled()  # the box is empty
    page.get_by_label("Message").tap()
    page.get_by_label("Message").fill("   ")
    expect(page.get_by_role("button", name="Send")).to_be_disabled()  # blank is empty too
    page.get_by_label("Message").press("Enter")
    expect(page.get_by_text("Nothing to send: type a message")).to_be_visible()  # Enter says why
    page.get_by_label("Message").fill("second phone question")
    expect(page.get_by_role("button", name="Send")).to_be_enabled()
    upstream.plan(Behavior(text="second phone answer", chunk_delay=0.0))
    page.get_by_role("button", name="Send").tap()
    expect(last_answer(page)).to_contain_text("second phone answer")
    expect(page.locator(".lc-chat-title")).to_have_text("second phone question")
    no_sideways_scroll(page)


def test_on_a_phone_a_search_result_closes_the_drawer_and_opens_the_chat_at_the_match(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    page = phone(open_page, app)
    cid = answered(page, upstream, "about birds", "The quetzalbird nests high.")
    answered(page, upstream, "and more", "Nothing else.")
    load(page, app.url + "/")
    open_chats(page)
    page.get_by_role("button", name="Search chats (Ctrl+K)").tap()
    page.get_by_label("Search chats", exact=True).fill("quetzalbird")
    page.locator(".q-dialog .q-btn").filter(has_text="quetzalbird").first.tap()
    page.wait_for_url(f"**/chat/{cid}")
    expect(page.get_by_role("button", name="New chat")).not_to_be_in_viewport()
    found = page.locator("[data-lc-found]")
    expect(found).to_contain_text("quetzalbird")
    expect(found).to_be_in_viewport()
    tappable(page, "Send")


def test_on_a_phone_the_audit_panel_is_a_full_screen_sheet_that_closes_with_its_button_and_with_esc(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    page = phone(open_page, app)
    answered(page, upstream, "audit me", "audited")
    sheet = page.locator(".lc-audit-drawer")
    for close in ("button", "Escape"):
        page.get_by_role("button", name="Audit panel").tap()
        expect(page.locator(".lc-audit-card").first).to_be_visible()
        page.wait_for_function(  # slid in, from edge to edge
            "w => { const r = document.querySelector('.lc-audit-drawer').getBoundingClientRect();"
            " return r.x <= 0 && r.width >= w; }",
            arg=PHONE[0],
        )
        tappable(page, "Close audit panel")
        if close == "button":
            page.get_by_role("button", name="Close audit panel").tap()
        else:
            page.keyboard.press("Escape")
        expect(sheet).not_to_be_in_viewport()
        tappable(page, "Send")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")  # Esc closed the sheet, stopped nothing
    no_sideways_scroll(page)


def test_on_a_phone_a_tapped_tooltip_is_gone_after_the_next_tap(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    page = phone(open_page, app)
    answered(page, upstream, "tips", "tooltips")
    page.get_by_role("button", name="Audit panel").tap()
    page.get_by_role("button", name="Export").tap()  # a button with a tooltip
    page.get_by_role("button", name="Close audit panel").tap()
    page.get_by_label("Message").tap()
    expect(page.locator(".q-tooltip:visible")).to_have_count(0)
    page.get_by_label("Message").fill("another")
    upstream.plan(Behavior(text="more tips", chunk_delay=0.0))
    page.get_by_role("button", name="Send").tap()  # it has a tooltip on a desktop
    expect(last_answer(page)).to_contain_text("more tips")
    page.get_by_label("Message").tap()
    expect(page.locator(".q-tooltip:visible")).to_have_count(0)


def test_at_1280_px_the_audit_panel_takes_the_chat_lists_place_and_the_chat_stays_wide_and_uncovered(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    page = open_page(app, width=DESKTOP[0], height=DESKTOP[1])
    answered(page, upstream, "wide", "a wide answer")
    page.get_by_role("button", name="Audit panel").click()
    expect(page.locator(".lc-audit-card").first).to_be_visible()
    expect(page.locator(".lc-chats-drawer")).not_to_be_in_viewport()  # the list made room
    chat, panel = (page.locator(s).bounding_box() for s in (".lc-main", ".lc-audit-drawer"))
    assert chat and panel and chat["width"] >= 768, chat  # a reading column, not a strip
    assert chat["x"] + chat["width"] <= panel["x"] + 1, (chat, panel)  # nothing of it under the panel
    tappable(page, "Send")
    page.get_by_role("button", name="Close audit panel").click()
    expect(page.locator(".lc-audit-drawer")).not_to_be_in_viewport()
    expect(page.locator(".lc-chats-drawer")).to_be_in_viewport()  # and is back
    no_sideways_scroll(page)


def on_row(page: Page, cid: str | None) -> None:
    """The keyboard focus comes to rest on the row of ``cid`` (None: on no row), within a few seconds."""
    focused = "(document.activeElement?.closest('[data-conversation]')?.dataset.conversation ?? null)"
    with contextlib.suppress(PlaywrightTimeoutError):
        page.wait_for_function(f"want => {focused} === want", arg=cid, timeout=5_000)
    assert page.evaluate(focused) == cid


def test_the_chat_list_is_one_tab_stop_the_arrow_keys_move_in_it_f2_renames_and_delete_deletes(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    page = open_page(app, width=DESKTOP[0], height=DESKTOP[1])
    for n in range(3):
        new_chat(page, app)
        answered(page, upstream, f"keyboard chat {n}", f"answer {n}")
    new_chat(page, app)
    rows = page.evaluate(
        "[...document.querySelectorAll('.lc-chats [data-conversation]')].map(e => e.dataset.conversation)"
    )
    assert len(rows) >= 3
    page.get_by_label("Filter chats by title").focus()
    page.keyboard.press("Tab")  # the list: its first row
    on_row(page, rows[0])
    page.keyboard.press("ArrowDown")
    on_row(page, rows[1])
    page.keyboard.press("End")
    on_row(page, rows[-1])
    page.keyboard.press("ArrowUp")
    on_row(page, rows[-2])
    page.keyboard.press("Tab")  # out of the list in one stop
    on_row(page, None)
    page.keyboard.press("Shift+Tab")  # back in, on the row left
    on_row(page, rows[-2])
    page.keyboard.press("F2")
    expect(page.get_by_text("Rename conversation")).to_be_visible()
    expect(page.get_by_role("textbox", name="Name")).to_be_focused()
    page.keyboard.press("Escape")
    expect(page.get_by_text("Rename conversation")).to_be_hidden()
    expect(page.locator(f"[data-conversation='{rows[-2]}'] a")).to_be_focused()  # back on its row
    page.keyboard.press("Delete")
    expect(page.get_by_text("Its messages and its ledger are removed.")).to_be_visible()
    page.keyboard.press("Escape")  # not deleted
    expect(page.get_by_text("Its messages and its ledger are removed.")).to_be_hidden()
    page.locator(f"[data-conversation='{rows[-2]}'] a").focus()
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/chat/{rows[-2]}")


def test_skip_links_reach_the_latest_answer_and_the_chat_list_and_hidden_controls_take_no_focus(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    page = open_page(app, width=DESKTOP[0], height=DESKTOP[1])
    cid = answered(page, upstream, "skip here", "the latest answer")
    page.get_by_role("link", name="Skip to the latest answer").focus()
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement === [...document.querySelectorAll('.lc-assistant')].pop()")
    page.get_by_role("link", name="Skip to the chat list").focus()
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.closest('[data-conversation]')?.dataset.conversation") == cid
    hidden = []
    for _ in range(40):  # every stop a Tab reaches is something one can see
        page.keyboard.press("Tab")
        shown = page.evaluate(
            "(() => { const e = document.activeElement; if (!e || e === document.body) return true;"
            " const r = e.getBoundingClientRect(); return e.classList.contains('lc-skip') ||"
            " (r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden'); })()"
        )
        if not shown:
            hidden.append(page.evaluate("document.activeElement.outerHTML.slice(0, 120)"))
    assert hidden == []


@pytest.fixture
def slow(app: AppProcess) -> Iterator[LatencyProxy]:
    proxy = LatencyProxy(app.port, delay=0.6)
    yield proxy
    proxy.close()


def test_a_send_made_before_the_connection_is_live_arrives_exactly_once(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream, slow: LatencyProxy
) -> None:
    page = open_page(None, timeout_ms=30_000)
    upstream.plan(Behavior(text="early answer", chunk_delay=0.0))
    page.goto(slow.url + "/")
    box = page.get_by_label("Message")
    expect(box).to_be_editable()
    assert page.evaluate("window.did_handshake") is not True, "the socket connected before the test could type"
    box.fill("sent before the socket")
    box.press("Enter")
    expect(page.locator(".lc-user")).to_have_count(1, timeout=30_000)
    expect(last_answer(page)).to_contain_text("early answer", timeout=30_000)
    expect(box).to_have_value("", timeout=10_000)
    page.wait_for_timeout(2000)  # a named window: nothing more arrives
    assert len(upstream.records) == 1
    expect(page.locator(".lc-user")).to_have_count(1)


# the sidebar's foot (Download all, the Tools section) gets its whole height or 40% of the drawer, whichever is
# less, however long the chat list: the list scrolls, the foot is never squeezed (issue 41: 73 px with ~10 chats)
FOOT_ROOM = """(foot) => {
  const box = foot.parentElement, style = getComputedStyle(box);
  const room = box.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
  return [foot.getBoundingClientRect().height, Math.min(foot.scrollHeight, 0.4 * room)];
}"""


def test_with_many_chats_the_list_top_stays_opaque_and_download_and_tools_stay_in_reach(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    page = open_page(app, width=DESKTOP[0], height=480)
    for n in range(8):
        new_chat(page, app)
        answered(page, upstream, f"many chats {n}", f"answer {n}")
    listing = page.locator(".lc-side-scroll")
    assert page.evaluate("e => e.scrollHeight > e.clientHeight", listing.element_handle()), "the list fits: no test"
    expect(page.get_by_role("button", name="Download all chats (zip)")).to_be_in_viewport()
    foot = page.locator(".lc-side-foot").element_handle()
    shown, wanted = page.evaluate(FOOT_ROOM, foot)
    assert shown >= wanted - 1, f"the Tools section is squeezed to {shown:.0f} px of the {wanted:.0f} it needs"
    page.evaluate("e => { e.scrollTop = e.scrollHeight; }", listing.element_handle())
    top = page.locator(".lc-sidebar-top")
    assert page.evaluate("e => getComputedStyle(e).backgroundColor", top.element_handle()) in (
        "rgb(255, 255, 255)",
        "rgb(17, 24, 39)",
    ), "the list's top block is see-through"
    tappable(page, "New chat")  # nothing slides over it
    expect(page.get_by_role("button", name="Download all chats (zip)")).to_be_in_viewport()
    no_sideways_scroll(page)


def reachable(page: Page, control: Locator) -> None:
    """``control`` shows in the window, nothing lies over its centre, it is at least 24 px (WCAG 2.5.8) and it
    takes no Tab stop of its own (the row's keys reach it: F2, Delete)."""
    expect(control).to_be_in_viewport()
    box = control.bounding_box()
    assert box is not None and box["width"] >= 24 and box["height"] >= 24, box
    at = [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2]
    hit = "([x, y, label]) => document.elementFromPoint(x, y)?.closest('button')?.getAttribute('aria-label') === label"
    page.wait_for_function(hit, arg=[*at, control.get_attribute("aria-label")])
    expect(control).to_have_attribute("tabindex", "-1")


def test_a_rows_rename_and_delete_are_in_reach_of_a_mouse_at_1280_px_and_of_a_finger_on_a_touch_phone(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    desk = open_page(app, width=DESKTOP[0], height=DESKTOP[1])
    cid = answered(desk, upstream, "row actions question", "row actions answer")
    touch = phone(open_page, app, f"/chat/{cid}")
    open_chats(touch)
    for page, how in ((desk, "by mouse"), (touch, "by touch")):
        row = page.locator(f"[data-conversation='{cid}']")
        rename = row.get_by_role("button", name="Rename", exact=True)
        reachable(page, rename)
        if page is touch:
            rename.tap()
        else:
            rename.click()
        dialog = page.get_by_role("dialog")
        expect(dialog.get_by_text("Rename conversation")).to_be_visible()
        dialog.get_by_role("textbox", name="Name").fill(f"renamed {how}")
        dialog.get_by_role("button", name="Save").click()
        expect(row.get_by_role("link")).to_have_text(f"renamed {how}")
        reachable(page, row.get_by_role("button", name="Delete", exact=True))
    row = touch.locator(f"[data-conversation='{cid}']")
    row.get_by_role("button", name="Delete", exact=True).tap()
    touch.get_by_role("dialog").get_by_role("button", name="Delete").tap()
    expect(touch.locator(f"[data-conversation='{cid}']")).to_have_count(0)
    expect(desk.locator(f"[data-conversation='{cid}']")).to_have_count(0)  # the other tab's list follows
