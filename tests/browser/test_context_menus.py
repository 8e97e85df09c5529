"""The message box's "/" prompts and "@" resources in real Chromium, with the keyboard alone: the real app with the
real demo tool server (stdio MCP) and the scripted upstream, whose records show what the model was sent."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import ANSWER
from tests.support.tools import demo_server_config
from tests.support.upstream import Behavior, ScriptedUpstream


@pytest.fixture(scope="module")
def app_options(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, ...]:
    folder = tmp_path_factory.mktemp("context-menus")
    server = demo_server_config(folder / "record.jsonl")
    entry = {"command": server.command, "args": list(server.args), "cwd": server.cwd, "env": server.env}
    (folder / "mcp.json").write_text(json.dumps({"mcpServers": {"demo": entry}}))
    return ("--mcp-config", str(folder / "mcp.json"))


def ready_box(page: Page):  # a Locator
    page.wait_for_function("() => window.did_handshake === true")
    expect(page.locator("[data-tool-server='demo']")).to_have_attribute("data-state", "ready")
    box = page.get_by_label("Message")
    box.focus()
    return box


def test_slash_lists_the_prompts_and_the_keyboard_alone_inserts_one_that_is_sent(
    page: Page, upstream: ScriptedUpstream
) -> None:
    box = ready_box(page)
    box.press("/")
    menu = page.get_by_role("listbox", name="Prompts")
    expect(menu.get_by_role("option", name="Summarize the notes")).to_be_visible()
    expect(menu.get_by_role("option", name="Stand-up")).to_contain_text("demo")
    expect(box).to_have_attribute("aria-expanded", "true")
    box.press_sequentially("stand")
    expect(menu.get_by_role("option")).to_have_count(1)
    expect(box).to_have_attribute("aria-activedescendant", "lc-menu-0")
    box.press("Enter")  # chooses: never sends
    expect(menu).to_have_count(0)
    chip = page.locator("[data-lc-main-tray] .lc-chip")
    expect(chip).to_contain_text("from prompt demo/standup")
    expect(box).to_have_value("")
    upstream.plan(Behavior(text="Here is your stand-up."))
    box.press("Enter")
    expect(page.locator(ANSWER).last).to_contain_text("Here is your stand-up.")
    users = [m for m in upstream.last.raw["messages"] if m["role"] == "user"]
    assert "**user:** Write my stand-up" in json.dumps(users[-1]["content"])


def test_a_prompt_with_arguments_opens_a_form_and_fills_the_message(page: Page, upstream: ScriptedUpstream) -> None:
    box = ready_box(page)
    box.press_sequentially("/summ")
    expect(page.get_by_role("option", name="Summarize the notes")).to_have_attribute("aria-selected", "true")
    box.press("Enter")
    topic = page.get_by_label("topic")
    expect(topic).to_be_visible()
    topic.focus()
    topic.press_sequentially("caching")
    topic.press("Enter")
    chip = page.locator("[data-lc-main-tray] .lc-chip")
    expect(chip).to_contain_text("from prompt demo/summarize_notes")
    upstream.plan(Behavior(text="Summarized."))
    box.focus()
    box.press("Enter")
    expect(page.locator(ANSWER).last).to_contain_text("Summarized.")
    users = [m for m in upstream.last.raw["messages"] if m["role"] == "user"]
    assert "Summarize the notes on caching as bullets" in json.dumps(users[-1]["content"])


def test_at_lists_resources_and_escape_closes_the_menu_without_sending(page: Page) -> None:
    box = ready_box(page)
    box.press_sequentially("look at @")
    menu = page.get_by_role("listbox", name="Resources")
    expect(menu.get_by_role("option", name="Demo notes")).to_be_visible()
    expect(menu.get_by_role("option", name="notes section")).to_be_visible()  # a template
    box.press("Escape")
    expect(menu).to_have_count(0)
    expect(box).to_have_value("look at @")
    box.press_sequentially("week")
    expect(page.get_by_role("option")).to_have_count(1)
    box.press("ArrowDown")
    box.press("Enter")
    chip = page.locator("[data-lc-main-tray] .lc-chip")
    expect(chip).to_contain_text("from resource demo chart://demo/week.png")
    expect(chip.locator("img.lc-chip-thumb")).to_be_visible()
    expect(box).to_have_value("look at ")
