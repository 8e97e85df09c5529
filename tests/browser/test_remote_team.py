"""A team server in team mode (``--accounts local``, ``LEDGERCHAT_TOKEN_KEY`` set), in the real browser: an admin adds
it for the whole team and signs in; a member sees it (without Remove), and their first call waits on its card for
their own sign-in, which opens in a new tab, comes back to their session and lets the call run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from cryptography.fernet import Fernet
from playwright.sync_api import Locator, Page, expect

from tests.support.app_process import AppProcess
from tests.support.app_runner import AppRunner
from tests.support.browser import Pages, last_answer, send
from tests.support.oauth_upstream import OAuthUpstream
from tests.support.people import add_account, sign_in
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream


@pytest.fixture(scope="module")
def app(run_app: AppRunner) -> Iterator[AppProcess]:
    key = Fernet.generate_key().decode()
    process = run_app.made("--accounts", "local", env={"LEDGERCHAT_TOKEN_KEY": key})
    try:
        process.start(60.0)
        add_account(process, "ann", admin=True)
        add_account(process, "ben")
        yield process
    finally:
        run_app.stop(process)


def sign_in_in_a_new_tab(page: Page, link: Locator) -> None:
    with page.context.expect_page() as opened:
        link.click()
    tab = opened.value
    tab.wait_for_load_state()
    expect(tab.get_by_role("status")).to_contain_text("Signed in to notes")
    tab.close()


def test_an_admins_team_server_asks_each_member_to_sign_in_on_their_first_call(
    app: AppProcess, open_page: Pages, upstream: ScriptedUpstream, oauth: OAuthUpstream
) -> None:
    ann = sign_in(open_page(None), app, "ann")
    ann.get_by_text("Add a tool server").click()
    ann.get_by_role("textbox", name="Name").fill("notes")
    ann.get_by_role("textbox", name="Streamable-HTTP URL").fill(oauth.url)
    ann.get_by_role("checkbox", name="For the whole team").click()
    ann.get_by_role("button", name="Add the server").click()
    server = ann.locator("[data-remote-server='notes']")
    sign_in_in_a_new_tab(ann, server.get_by_role("link", name="Sign in to notes"))
    expect(server).to_contain_text("echo, stamp, slow_echo")

    ben = sign_in(open_page(None), app, "ben")
    theirs = ben.locator("[data-remote-server='notes']")
    expect(theirs).to_contain_text("team")
    expect(theirs.get_by_role("button", name="Remove")).to_have_count(0)
    expect(ben.get_by_role("checkbox", name="For the whole team")).to_have_count(0)
    upstream.plan(
        Behavior(text="Let me look.", tool_calls=[PlannedCall("echo", '{"text": "ben"}', "call_t1")]),
        Behavior(text="Done."),
    )
    send(ben, "echo ben")
    card = ben.locator("[data-tool-call='call_t1']")
    sign_in_in_a_new_tab(ben, card.get_by_role("link", name="Sign in to notes"))
    expect(card).to_have_attribute("data-tool-status", "done")
    expect(last_answer(ben)).to_have_attribute("data-status", "complete")
    stats = oauth.stats()
    assert stats["exchanged"] == 2 and stats["registered"] == 2  # each person their own sign-in
    assert (app.data_dir / "token.key").exists() is False  # the key came from the environment
