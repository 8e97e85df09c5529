"""Remote tool servers on two app processes on one PostgreSQL database (issue 38): a server added, switched off and
removed in A's Tools panel is seen so in B's, without a restart (B reads the servers again once the database's
stamp of them changed: ``engine.tools.RemoteServers.fresh``), and B's turns use what A's panel shows: a call on B
runs on the server A added and B's chat records it (``tool_server_used``), and once A switched it off, B's next
turn offers none of its tools and its chat says why (``tool_server_gone``), in the audit's words. Against the demo
tool server over real streamable HTTP, in Chromium."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.support.app_process import AppProcess
from tests.support.browser import Pages, conversation_id, last_answer, open_audit, send
from tests.support.instances import AppsOnOneDatabase
from tests.support.mcp_http import serve_http
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream


@pytest.fixture(scope="module")
def demo_url() -> Iterator[str]:
    """The demo tool server over streamable HTTP."""
    yield from serve_http("demo.tools_server")


def row(page: Page) -> Locator:
    return page.locator("[data-remote-server='docs']")


def kinds(page: Page, app: AppProcess, cid: str) -> list[dict[str, object]]:
    export = page.request.get(f"{app.url}/export/{cid}")
    assert export.ok
    return [json.loads(line) for line in export.text().splitlines() if line.strip()]


def test_a_server_added_switched_off_and_removed_on_a_is_seen_so_on_b_and_b_s_chat_records_it(
    pair: AppsOnOneDatabase, open_page: Pages, upstream: ScriptedUpstream, demo_url: str
) -> None:
    on_a, on_b = open_page(pair.a), open_page(pair.b)
    expect(row(on_b)).to_have_count(0)
    on_a.get_by_text("Add a tool server").click()
    on_a.get_by_role("textbox", name="Name").fill("docs")
    on_a.get_by_role("textbox", name="Streamable-HTTP URL").fill(demo_url)
    on_a.get_by_role("button", name="Add the server").click()
    expect(row(on_a).locator("[data-testid], .lc-meta").filter(has_text="calculator")).not_to_have_count(0)
    expect(row(on_b)).to_have_attribute("data-enabled", "true")  # B shows it, with the tools A's connection listed
    expect(row(on_b)).to_contain_text("calculator")

    upstream.plan(
        Behavior(text="", tool_calls=[PlannedCall("calculator", '{"expression": "6*7"}', "call_b1")]),
        Behavior(text="It is 42."),
    )
    send(on_b, "six times seven?")
    expect(last_answer(on_b)).to_have_attribute("data-status", "complete")
    cid = conversation_id(on_b)
    used = [e for e in kinds(on_b, pair.b, cid) if e["kind"] == "tool_server_used"]
    assert len(used) == 1 and used[0]["server"] == "docs" and used[0]["url"] == demo_url
    tool = [m for m in upstream.last.messages if m["role"] == "tool"]
    assert tool[-1]["content"] == "6*7 = 42", "the call ran on the server A added"

    row(on_a).get_by_role("switch").click()  # A switches it off
    expect(row(on_a)).to_have_attribute("data-enabled", "false")
    expect(row(on_b)).to_have_attribute("data-enabled", "false")
    upstream.plan(Behavior(text="No calculator now."))
    send(on_b, "and now?")
    expect(last_answer(on_b)).to_have_attribute("data-status", "complete")
    assert "calculator" not in json.dumps(upstream.last.raw.get("tools") or []), "B offered a switched-off tool"
    gone = [e for e in kinds(on_b, pair.b, cid) if e["kind"] == "tool_server_gone"]
    assert len(gone) == 1 and gone[0]["why"] == "disabled"
    open_audit(on_b)
    expect(on_b.locator(".lc-audit-card").filter(has_text="tool server gone")).to_contain_text(
        f"Tool server 'docs' ({demo_url}) was switched off on"
    )

    row(on_a).get_by_role("button", name="Remove").click()
    expect(row(on_a)).to_have_count(0)
    expect(row(on_b)).to_have_count(0)
