"""End-to-end agent turns: the real app with the real demo tool server (stdio MCP), headless Chromium, the
scripted upstream (which rejects, as OpenAI does, any history where a tool call lacks its one tool message)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support.app_process import AppProcess
from tests.support.browser import Pages, conversation_id, last_answer, send
from tests.support.tools import demo_server_config, server_record
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream
from tests.support.waiting import wait_until_blocking


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("tools") / "record.jsonl"


@pytest.fixture(scope="module")
def app_options(tmp_path_factory: pytest.TempPathFactory, record: Path) -> tuple[str, ...]:
    """The module's app runs the demo tool server (stdio MCP), which writes what it did to ``record``."""
    server = demo_server_config(record)
    config = tmp_path_factory.mktemp("e2e-tools") / "mcp.json"
    entry = {"command": server.command, "args": list(server.args), "cwd": server.cwd, "env": server.env}
    config.write_text(json.dumps({"mcpServers": {"demo": entry}}))
    return ("--mcp-config", str(config))


def card(page: Page, call_id: str):  # a Locator
    return page.locator(f"[data-tool-call='{call_id}']")


def test_the_tool_servers_panel_lists_the_demo_server_ready_with_its_tools(page: Page) -> None:
    server = page.locator("[data-tool-server='demo']")
    expect(server).to_have_attribute("data-state", "ready")
    expect(server).to_contain_text("slow_task")


def test_stop_during_a_running_tool_cancels_it_on_the_server_and_the_next_question_is_accepted(
    page: Page, upstream: ScriptedUpstream, record: Path
) -> None:
    upstream.plan(
        Behavior(text="Starting the job.", tool_calls=[PlannedCall("slow_task", '{"seconds": 8}', "call_b1")])
    )
    send(page, "run the slow job")
    expect(card(page, "call_b1")).to_have_attribute("data-tool-status", "running")
    expect(card(page, "call_b1")).to_have_attribute("aria-label", "Tool call slow_task: running")
    page.get_by_role("button", name="Stop").click()
    expect(card(page, "call_b1")).to_have_attribute("data-tool-status", "cancelled")
    expect(last_answer(page)).to_have_attribute("data-status", "interrupted")
    expect(last_answer(page)).to_contain_text("Starting the job.")
    wait_until_blocking(lambda: any(r["event"] == "slow_task_cancelled" for r in server_record(record)), 5)
    upstream.plan(Behavior(text="All right."))
    send(page, "never mind")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    assert upstream.last.status == 200
    assert [m.get("tool_call_id") for m in upstream.last.messages if m["role"] == "tool"] == ["call_b1"]


def test_hostile_tool_output_is_shown_as_text_and_nothing_runs(page: Page, upstream: ScriptedUpstream) -> None:
    upstream.plan(
        Behavior(text="", tool_calls=[PlannedCall("web_snippet", "{}", "call_h1")]),
        Behavior(text="That page looked suspicious."),
    )
    send(page, "fetch the snippet")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    expect(card(page, "call_h1")).to_have_attribute("data-tool-status", "done")
    card(page, "call_h1").get_by_text("Result").click()
    result = card(page, "call_h1").locator("[data-testid=tool-result], .lc-mono").last
    expect(result).to_contain_text("<script>window.__pwned=true</script>")
    expect(result).to_contain_text('<img src=x onerror="window.__pwned=true">')
    assert page.evaluate("window.__pwned") is None
    assert card(page, "call_h1").locator("script, img, a[href^='javascript']").count() == 0


def test_a_destructive_call_waits_through_a_reload_and_an_answer_in_one_tab_shows_answered_in_the_other(
    page: Page, open_page: Pages, app: AppProcess, upstream: ScriptedUpstream, record: Path
) -> None:
    arguments = json.dumps({"title": "Caching", "reason": "outdated " * 30})
    upstream.plan(
        Behavior(text="Deleting it.", tool_calls=[PlannedCall("delete_note", arguments, "call_d1")]),
        Behavior(text="It is gone."),
    )
    send(page, "delete the caching note")
    expect(card(page, "call_d1")).to_have_attribute("data-tool-status", "waiting")
    expect(
        card(page, "call_d1").get_by_text("Asks every time: the tool says it may change or delete things.")
    ).to_be_visible()
    expect(card(page, "call_d1").locator("[data-lc-since]")).to_have_text(re.compile(r"^\d+ s$"))  # time waited
    expect(card(page, "call_d1").locator("[data-lc-since]")).to_have_text(re.compile(r"^([5-9]|\d\d+) s$"))
    expect(last_answer(page).locator(".lc-waiting")).to_have_text("")  # it waits for you, not for the provider
    page.reload()  # the wait is in the ledger: the card comes back, still waiting, with its buttons
    expect(card(page, "call_d1")).to_have_attribute("data-tool-status", "waiting")
    run = card(page, "call_d1").get_by_role("button", name="Run", exact=True)
    expect(run).to_be_visible()
    second = open_page(app, f"/chat/{conversation_id(page)}")
    expect(card(second, "call_d1")).to_have_attribute("data-tool-status", "waiting")
    card(second, "call_d1").get_by_role("button", name="Always allow delete_note in this chat").click()
    for tab in (second, page):  # the first tab, which did nothing, shows it answered
        expect(card(tab, "call_d1")).to_have_attribute("data-tool-status", "done")
        expect(card(tab, "call_d1")).to_contain_text("Run, in this chat by you")
        expect(card(tab, "call_d1").get_by_role("button", name="Run", exact=True)).to_have_count(0)
        expect(last_answer(tab)).to_have_attribute("data-status", "complete")
    expect(page.locator("[data-grant='chat'][data-tool='delete_note']")).to_be_visible()  # in the Tools panel
    assert [r["title"] for r in server_record(record) if r["event"] == "delete_note"] == ["Caching"]


CUTS = {
    # after the reasoning, before any text: the reasoning block was the one growing
    "reasoning": Behavior(text="never shown", reasoning="thinking " * 30, drop_after=0, chunk_delay=0.005),
    # in the middle of a call's arguments (counted on from the text's 2 words)
    "arguments": Behavior(
        text="Computing now.",
        tool_calls=[PlannedCall("calculator", json.dumps({"expression": "1 + " * 40 + "1"}), "call_cut", pieces=20)],
        drop_after=8,
        chunk_delay=0.005,
    ),
    # inside an open code block
    "code": Behavior(text="Here:\n\n```python\n" + "x = 1\n" * 60 + "```\n\nDone.", drop_after=30, chunk_delay=0.005),
}


@pytest.mark.parametrize("where", list(CUTS))
def test_a_stream_cut_in_reasoning_a_calls_arguments_or_a_code_block_ends_every_indicator(
    page: Page, upstream: ScriptedUpstream, where: str
) -> None:
    """A "thinking" indicator or spinner that never ends (cherry-studio #14838, opencode #41365, lobehub #12726)."""
    upstream.plan(CUTS[where])
    send(page, f"cut me in {where}")
    answer = last_answer(page)
    expect(answer).to_have_attribute("data-status", "failed")
    expect(answer).to_contain_text("Connection lost")
    expect(answer.locator(".lc-typing")).to_be_hidden()
    for live in ("writing", "queued", "waiting", "running"):
        expect(answer.locator(f"[data-tool-status='{live}']")).to_have_count(0)
    if where == "arguments":
        expect(card(page, "call_cut")).to_have_attribute("data-tool-status", "omitted")
    expect(page.get_by_role("button", name="Stop")).to_have_count(0)
    expect(page.get_by_role("button", name="Send")).to_be_visible()
