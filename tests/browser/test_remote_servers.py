"""A remote tool server a person adds in the Tools panel, behind a real OAuth authorization server
(``tests.support.oauth_server``: the ``mcp`` SDK's AS and RS), in the real browser: the sign-in opens in a new tab
and comes back; a call that needs a sign-in shows "Sign in to <server>" on its card in every tab and runs once
signed in; Stop while the card waits ends the call ``not_run``; no token anywhere but sealed."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import Locator, Page, expect

from tests.support.app_process import AppProcess
from tests.support.browser import Pages, conversation_id, last_answer, send
from tests.support.oauth_upstream import OAuthUpstream
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream


def card(page: Page, call_id: str) -> Locator:
    return page.locator(f"[data-tool-call='{call_id}']")


def sign_in_in_a_new_tab(page: Page, link: Locator) -> None:
    """Click the link as a person does: the server's sign-in page opens in a tab of its own and comes back."""
    with page.context.expect_page() as opened:
        link.click()
    tab = opened.value
    tab.wait_for_load_state()
    expect(tab.get_by_role("status")).to_contain_text("Signed in to notes")
    tab.close()


def add_the_server(page: Page, oauth: OAuthUpstream) -> Locator:
    page.get_by_text("Add a tool server").click()
    page.get_by_role("textbox", name="Name").fill("notes")
    page.get_by_role("textbox", name="Streamable-HTTP URL").fill(oauth.url)
    page.get_by_role("button", name="Add the server").click()
    return page.locator("[data-remote-server='notes']")


def test_a_server_added_in_the_panel_signs_in_and_a_call_that_needs_a_sign_in_waits_on_its_card(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream, oauth: OAuthUpstream
) -> None:
    page = open_page(app)
    server = add_the_server(page, oauth)
    sign_in_in_a_new_tab(page, server.get_by_role("link", name="Sign in to notes"))
    expect(server).to_contain_text("echo, stamp, slow_echo")
    server.get_by_role("button", name="Sign out").click()  # the tools stay known; the next call must sign in
    upstream.plan(
        Behavior(text="Let me look.", tool_calls=[PlannedCall("echo", '{"text": "hello"}', "call_r1")]),
        Behavior(text="It said hello back."),
    )
    send(page, "echo hello")
    link = card(page, "call_r1").get_by_role("link", name="Sign in to notes")
    expect(link).to_be_visible()
    second = open_page(app, f"/chat/{conversation_id(page)}")  # the card is the ledger's: every tab shows it
    expect(card(second, "call_r1").get_by_role("link", name="Sign in to notes")).to_be_visible()
    sign_in_in_a_new_tab(page, link)
    for tab in (page, second):
        expect(card(tab, "call_r1")).to_have_attribute("data-tool-status", "done")
        expect(card(tab, "call_r1")).to_contain_text("Signed in.")
        expect(last_answer(tab)).to_have_attribute("data-status", "complete")
    tool = [m for m in upstream.last.messages if m["role"] == "tool"]
    assert tool[-1]["content"] == "echo: hello"
    stats = oauth.stats()
    assert stats["exchanged"] == 2 and stats["calls"] == 1

    # Stop while the card waits: the call ends not_run, the turn interrupted, and the next request is accepted
    page.locator("[data-remote-server='notes']").get_by_role("button", name="Sign out").click()
    upstream.plan(Behavior(text="Once more.", tool_calls=[PlannedCall("echo", '{"text": "again"}', "call_r2")]))
    send(page, "echo again")
    expect(card(page, "call_r2").get_by_role("link", name="Sign in to notes")).to_be_visible()
    page.get_by_role("button", name="Stop").click()
    expect(card(page, "call_r2")).to_have_attribute("data-tool-status", "not_run")
    expect(last_answer(page)).to_have_attribute("data-status", "interrupted")
    upstream.plan(Behavior(text="All right."))
    send(page, "never mind")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    assert upstream.last.status == 200
    tool = [m for m in upstream.last.messages if m["role"] == "tool"]
    assert "stopped while it waited for a sign-in to notes" in tool[-1]["content"]
    assert oauth.stats()["calls"] == 1

    # no token anywhere: the data folder (ledger, stores, logs), the app's log, the export
    export = page.request.get(f"{app.url}/export/{conversation_id(page)}")
    tokens = [t.encode() for t in oauth.stats()["tokens"]]
    places = [p for p in app.data_dir.rglob("*") if p.is_file()] + [app.log]
    for place in places:
        data = place.read_bytes()
        assert not any(t in data for t in tokens), place
    assert not any(t in export.body() for t in tokens)
    assert json.loads((app.data_dir / "remote_servers.json").read_text())[0]["name"] == "notes"
    assert isinstance(app.data_dir, Path)
