"""Refresh of a sent "@" resource in real Chromium: the real app with the second SDK server
(``tests.support.context_server``: ``counter://second/visits`` changes at every read) over stdio, and the scripted
upstream, whose records show what the model was sent. The sent message never changes; the fresh copy goes with the
next message, and the audit panel shows both hashes. When the server says the resource changed (its ``visit`` tool,
``notifications/resources/updated`` on a ``subscriptions/listen`` stream) the sent chip says "changed on second" at
once; the Refresh takes the mark away."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.support.browser import ANSWER, open_audit
from tests.support.tools import second_server_config
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream
from tests.support.waiting import wait_until_blocking


@pytest.fixture(scope="module")
def requests(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The second server's record of the requests it got (one method a line)."""
    return tmp_path_factory.mktemp("resource-requests") / "requests.txt"


@pytest.fixture(scope="module")
def app_options(tmp_path_factory: pytest.TempPathFactory, requests: Path) -> tuple[str, ...]:
    folder = tmp_path_factory.mktemp("resource-refresh")
    server = second_server_config()
    entry = {"command": server.command, "args": list(server.args), "cwd": server.cwd,
             "env": {"LC_CONTEXT_RECORD": str(requests)}, "approval": {"visit": "run"}}  # fmt: skip
    (folder / "mcp.json").write_text(json.dumps({"mcpServers": {"second": entry}}))
    return ("--mcp-config", str(folder / "mcp.json"))


def said(upstream: ScriptedUpstream) -> str:
    users = [m for m in upstream.last.raw["messages"] if m["role"] == "user"]
    return json.dumps(users[-1]["content"])


def attach_visits(page: Page, words: str) -> tuple[Locator, Locator]:
    """Type ``words @visits`` in the message box and choose the one resource with the keyboard: the box, and the
    tray's chip it made."""
    page.wait_for_function("() => window.did_handshake === true")
    expect(page.locator("[data-tool-server='second']")).to_have_attribute("data-state", "ready")
    box = page.get_by_label("Message")
    box.focus()
    box.press_sequentially(f"{words} @visits")
    expect(page.get_by_role("option")).to_have_count(1)
    box.press("Enter")
    tray = page.locator("[data-lc-main-tray] .lc-chip")
    expect(tray).to_contain_text("from resource second counter://second/visits")
    return box, tray


def test_refresh_on_a_sent_resource_fetches_it_again_for_the_next_message_and_the_audit_shows_both_hashes(
    page: Page, upstream: ScriptedUpstream
) -> None:
    box, tray = attach_visits(page, "count")
    upstream.plan(Behavior(text="One visit."), Behavior(text="Two visits."))
    box.press("Enter")
    expect(page.locator(ANSWER).last).to_contain_text("One visit.")
    first = re.search(r"visit (\d+)", said(upstream))
    assert first is not None
    sent = page.locator(".lc-user").last
    old_sha = hashlib.sha256(f"visit {first.group(1)}\n".encode()).hexdigest()
    expect(sent.locator(f"[data-attachment='{old_sha}']").first).to_be_visible()

    refresh = page.get_by_role("button", name="Refresh visits.txt")
    refresh.focus()
    refresh.press("Enter")
    expect(tray).to_contain_text("from resource second counter://second/visits (refreshed)")
    new_sha = tray.get_attribute("data-attachment")
    assert new_sha is not None and new_sha != old_sha
    expect(sent.locator(f"[data-attachment='{old_sha}']").first).to_be_visible()  # the sent message is unchanged
    expect(sent.locator(f"[data-attachment='{new_sha}']")).to_have_count(0)

    box.focus()
    box.press_sequentially("and now?")
    box.press("Enter")
    expect(page.locator(ANSWER).last).to_contain_text("Two visits.")
    second = re.search(r"visit (\d+)", said(upstream))
    assert second is not None and int(second.group(1)) > int(first.group(1)), "the fresh bytes were sent"
    open_audit(page)
    audit = page.locator(".lc-audit-card").last
    expect(audit).to_contain_text(f"sha256 {new_sha} (refreshed: replaces sha256 {old_sha})")


def test_a_sent_resource_its_server_changed_says_so_beside_its_refresh_until_the_refresh(
    page: Page, upstream: ScriptedUpstream, requests: Path
) -> None:
    box, tray = attach_visits(page, "watch")
    upstream.plan(
        Behavior(text="Watching."),
        Behavior(text="Visiting.", tool_calls=[PlannedCall("visit", "{}", "c_visit")]),
        Behavior(text="Visited."),
        Behavior(text="Fresh."),
    )
    box.press("Enter")
    expect(page.locator(ANSWER).last).to_contain_text("Watching.")
    sent = page.locator(".lc-user").first
    old_sha = sent.locator("a[data-attachment]").first.get_attribute("data-attachment")
    mark = sent.locator(".lc-resource-changed")
    expect(mark).to_be_hidden()
    wait_until_blocking(
        lambda: requests.exists() and "subscriptions/listen" in requests.read_text().split(),
        what="the server asked to tell of changes",
    )

    box.focus()
    box.press_sequentially("visit it")
    box.press("Enter")
    expect(page.locator(ANSWER).last).to_contain_text("Visited.")
    expect(mark).to_be_visible()
    expect(mark).to_have_text("changed on second")
    expect(mark).to_have_attribute("aria-live", "polite")
    refresh = sent.get_by_role("button", name="Refresh visits.txt: it changed on second")
    expect(refresh).to_be_visible()
    page.reload()  # a page opened after the change shows it too
    page.wait_for_function("() => window.did_handshake === true")
    expect(mark).to_have_text("changed on second")
    expect(refresh).to_be_visible()

    refresh.focus()
    refresh.press("Enter")
    expect(tray).to_contain_text("(refreshed)")
    expect(mark).to_be_hidden()
    expect(sent.get_by_role("button", name="Refresh visits.txt", exact=True)).to_be_visible()
    new_sha = tray.get_attribute("data-attachment")
    assert new_sha is not None and new_sha != old_sha
    expect(sent.locator(f"a[data-attachment='{old_sha}']")).to_be_visible()  # the sent message is unchanged

    box.focus()
    box.press_sequentially("and now?")
    box.press("Enter")
    expect(page.locator(ANSWER).last).to_contain_text("Fresh.")
    open_audit(page)
    expect(page.locator(".lc-audit-card").last).to_contain_text(
        f"sha256 {new_sha} (refreshed: replaces sha256 {old_sha})"
    )
