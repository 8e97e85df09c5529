"""A tool's question in the real browser: the demo tool server (stdio MCP) asks for an order through MCP
elicitation; the form is in the tool card, it survives a reload, an answer in one tab shows as answered in the
other, an invalid value is refused in the form, and Stop while it waits says so on the card."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.support.app_process import AppProcess
from tests.support.browser import Pages, conversation_id, last_answer, send
from tests.support.tools import demo_server_config, server_record
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("questions") / "record.jsonl"


@pytest.fixture(scope="module")
def app_options(tmp_path_factory: pytest.TempPathFactory, record: Path) -> tuple[str, ...]:
    server = demo_server_config(record)
    config = tmp_path_factory.mktemp("e2e-questions") / "mcp.json"
    entry = {"command": server.command, "args": list(server.args), "cwd": server.cwd, "env": server.env}
    config.write_text(json.dumps({"mcpServers": {"demo": entry}}))
    return ("--mcp-config", str(config))


def form(page: Page, call_id: str) -> Locator:
    return page.locator(f"[data-tool-call='{call_id}'] [data-question=waiting]")


def ask_for_an_order(page: Page, upstream: ScriptedUpstream, call_id: str) -> None:
    upstream.plan(
        Behavior(text="Let me ask.", tool_calls=[PlannedCall("place_order", '{"item": "mug"}', call_id)]),
        Behavior(text="Your order is in."),
    )
    send(page, "order a mug")
    expect(form(page, call_id)).to_be_visible()


def test_a_question_answered_in_one_tab_shows_as_answered_in_the_second_and_invalid_values_are_refused(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream, record: Path
) -> None:
    first = open_page(app)
    ask_for_an_order(first, upstream, "call_q1")
    second = open_page(app, f"/chat/{conversation_id(first)}")
    expect(form(second, "call_q1")).to_be_visible()
    expect(form(second, "call_q1")).to_contain_text("Please fill in the order")
    box = form(first, "call_q1")
    box.get_by_role("textbox", name="Name").fill("Ada")
    box.get_by_role("spinbutton", name="Quantity").fill("0")
    box.get_by_role("button", name="Submit").click()
    expect(box.get_by_role("alert")).to_contain_text("Quantity: must be at least 1.")
    expect(box.get_by_role("alert")).to_contain_text("Size is required.")
    assert server_record(record) == [] or all(r.get("item") != "mug" for r in server_record(record))
    box.get_by_role("spinbutton", name="Quantity").fill("2")
    box.get_by_role("radio", name="M").click()
    box.get_by_role("checkbox", name="Gift wrap").click()
    box.get_by_role("button", name="Submit").click()
    for page in (first, second):
        expect(form(page, "call_q1")).to_have_count(0)
        answered = page.locator("[data-tool-call='call_q1'] [data-question=answered]")
        expect(answered).to_contain_text('Submitted: gift: true, name: "Ada", quantity: 2, size: "M"')
        expect(last_answer(page)).to_have_attribute("data-status", "complete")
    assert upstream.last.status == 200
    tool = [m for m in upstream.last.messages if m["role"] == "tool"]
    assert tool[-1]["content"] == "Order placed: 2 x mug (M) for Ada, gift wrapped."


def test_reload_while_a_question_waits_keeps_the_form_and_stop_answers_it_cancel_on_the_card(
    page: Page, upstream: ScriptedUpstream
) -> None:
    ask_for_an_order(page, upstream, "call_q2")
    form(page, "call_q2").get_by_role("textbox", name="Name").fill("Bo")
    page.reload()
    expect(form(page, "call_q2")).to_be_visible()
    expect(form(page, "call_q2").get_by_role("textbox", name="Name")).to_be_visible()
    expect(form(page, "call_q2").get_by_role("radio", name="L")).to_be_visible()
    page.get_by_role("button", name="Stop").click()
    card = page.locator("[data-tool-call='call_q2']")
    expect(card.locator("[data-question=answered]")).to_contain_text(
        "Cancelled: the turn was stopped while the question waited."
    )
    expect(card).to_have_attribute("data-tool-status", "cancelled")  # never done with a green check
    expect(card.locator(".lc-tool-done")).to_have_count(0)
    expect(last_answer(page)).to_have_attribute("data-status", "interrupted")
    upstream.plan(Behavior(text="All right."))
    send(page, "never mind")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    assert upstream.last.status == 200
    assert [m.get("tool_call_id") for m in upstream.last.messages if m["role"] == "tool"] == ["call_q2"]


def test_on_a_phone_the_time_a_question_waited_stays_on_one_line(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    page = open_page(app, width=390, height=844, touch=True)
    ask_for_an_order(page, upstream, "call_phone_wait")
    waiting = form(page, "call_phone_wait").get_by_text("waiting", exact=True)
    waited = form(page, "call_phone_wait").locator("[data-lc-since]")
    expect(waited).to_have_text(re.compile(r"^\d+ s$"))  # counted in the browser
    boxes = [waiting.bounding_box(), waited.bounding_box()]
    assert all(box is not None and box["height"] < 24 for box in boxes), f"wrapped onto two lines: {boxes}"
