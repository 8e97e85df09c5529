"""The header on a 390×844 touch phone, in real Chromium: the chat's title is whole (never cut to "Ne…"), the model,
the agent preset and the chat's cost fold into one menu whose controls a finger reaches, and on a desktop they
stay in the header as before."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.support.app_process import AppProcess
from tests.support.browser import Pages, last_answer, send
from tests.support.upstream import Behavior, ScriptedUpstream

PHONE = {"width": 390, "height": 844, "touch": True}
SHOT = "/tmp/phone_header.png"
MENU = "Model, preset and cost"
WHOLE = "e => e.scrollWidth <= e.clientWidth && e.scrollHeight <= e.clientHeight"


def whole(page: Page, selector: str) -> None:
    """The element shows all of its text (nothing cut off, no ellipsis) and lies inside the window."""
    shown = page.locator(selector)
    expect(shown).to_be_in_viewport(ratio=1)
    page.wait_for_function(f"() => ({WHOLE})(document.querySelector({selector!r}))")


def on_top(page: Page, name: str) -> None:
    """The control named ``name`` is the topmost element at its own centre: a finger there reaches it."""
    control = page.get_by_role("button", name=name, exact=True).or_(page.get_by_role("combobox", name=name))
    expect(control).to_be_in_viewport(ratio=1)
    box = control.bounding_box()
    assert box is not None
    at = [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2]
    page.wait_for_function(
        "([x, y, name]) => { const e = document.elementFromPoint(x, y);"
        " const c = e && e.closest('[aria-label]'); return !!c && c.getAttribute('aria-label') === name; }",
        arg=[*at, name],
    )


def test_on_a_phone_the_chat_title_is_whole_and_model_preset_and_cost_fold_into_a_menu_a_finger_reaches(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    page = open_page(app, **PHONE)
    whole(page, ".lc-chat-title")  # "New chat"
    upstream.plan(Behavior(text="an answer that costs", chunk_delay=0.0))
    send(page, "Explain bulkheads")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    expect(page.locator(".lc-chat-title")).to_have_text("Explain bulkheads")
    whole(page, ".lc-chat-title")
    for name in ("Chats", MENU, "Switch between light and dark", "Audit panel"):
        on_top(page, name)
    chips = page.locator("[data-lc-header-chips]")
    expect(chips).to_be_hidden()  # folded: the header holds the title, not three cut chips
    page.get_by_role("button", name=MENU).tap()
    expect(chips).to_be_visible()
    expect(page.get_by_role("button", name=MENU)).to_have_attribute("aria-expanded", "true")
    for chip in ("[data-lc-header-chips] .lc-model-badge:not(.lc-chat-cost)", "[data-lc-header-chips] .lc-chat-cost"):
        whole(page, chip)
    expect(chips).to_contain_text("test-model")
    on_top(page, "Agent preset for the next answer")
    on_top(page, "Agent presets")
    page.screenshot(path=SHOT)
    page.get_by_role("combobox", name="Agent preset for the next answer").tap()
    expect(page.get_by_role("option", name="Default")).to_be_visible()  # the picker works from the menu
    page.get_by_role("option", name="Default").tap()
    expect(page.locator(".q-menu")).to_have_count(0)  # the picker's list closed; the menu stays for another choice
    expect(chips).to_be_visible()
    page.keyboard.press("Escape")
    expect(chips).to_be_hidden()
    expect(page.get_by_role("button", name=MENU)).to_have_attribute("aria-expanded", "false")
    page.get_by_role("button", name=MENU).tap()
    expect(chips).to_be_visible()
    page.touchscreen.tap(20, 500)  # a tap anywhere else (the chat) folds it again
    expect(chips).to_be_hidden()


def test_on_a_desktop_model_preset_and_cost_stay_in_the_header_with_no_menu(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    page = open_page(app, width=1280, height=800)
    upstream.plan(Behavior(text="a desktop answer", chunk_delay=0.0))
    send(page, "Explain bulkheads on a desktop")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    expect(page.get_by_role("button", name=MENU)).to_be_hidden()
    for chip in (".lc-model-badge:not(.lc-chat-cost)", ".lc-chat-cost", ".lc-chat-title"):
        whole(page, chip)
    on_top(page, "Agent preset for the next answer")
