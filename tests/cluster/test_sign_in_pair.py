"""A remote tool server's sign-in on two app processes on one PostgreSQL database without sticky sessions (issue 38):
the browser comes back from the server's sign-in page to instance B (a balancer's choice: the redirect to A's
``/oauth/callback`` is sent on to B's) while instance A waits for it; B hands the callback to A, A takes it, and
the tab B answered says "Signed in to notes"; the Tools panel's sign-in and a call's sign-in both finish so, and
the call on A runs. A callback whose sign-in no instance waits for is said to be not waiting, within B's bounded
wait. Against the real OAuth-protected server of ``tests.support.oauth_server``, in Chromium."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Locator, Page, Route, expect

from tests.support.browser import Pages, last_answer, send
from tests.support.instances import AppsOnOneDatabase
from tests.support.oauth_upstream import OAuthUpstream, running
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream

RELAYED_WITHIN_MS = 15_000  # B's wait for the holder is 4 s at most; the rest is the page's own load


@pytest.fixture(scope="module")
def oauth() -> Iterator[OAuthUpstream]:
    yield from running()


def back_to_b(page: Page, pair: AppsOnOneDatabase, oauth: OAuthUpstream) -> None:
    """The balancer: the sign-in page's redirect back to A's ``/oauth/callback`` goes to B's instead (Playwright
    routes no redirect hop, so the authorization server's answer is rewritten)."""

    def to_b(route: Route) -> None:
        answer = route.fetch(max_redirects=0)
        location = answer.headers["location"]
        assert location.startswith(f"{pair.a.url}/oauth/callback?"), "A asked the browser to come back to it"
        headers = {**answer.headers, "location": location.replace(pair.a.url, pair.b.url, 1)}
        route.fulfill(response=answer, headers=headers)

    page.context.route(lambda url: url.startswith(f"{oauth.base}/authorize"), to_b)


def sign_in_through_b(page: Page, link: Locator, pair: AppsOnOneDatabase) -> None:
    with page.context.expect_page() as opened:
        link.click()
    tab = opened.value
    tab.wait_for_load_state()
    expect(tab.get_by_role("status")).to_contain_text("Signed in to notes", timeout=RELAYED_WITHIN_MS)
    assert tab.url.startswith(f"{pair.b.url}/oauth/callback?"), "B answered the callback"
    tab.close()


def test_a_sign_in_waiting_on_a_is_finished_by_the_browser_coming_back_to_b_and_the_call_on_a_runs(
    pair: AppsOnOneDatabase, open_page: Pages, upstream: ScriptedUpstream, oauth: OAuthUpstream
) -> None:
    page = open_page(pair.a)
    back_to_b(page, pair, oauth)
    page.get_by_text("Add a tool server").click()
    page.get_by_role("textbox", name="Name").fill("notes")
    page.get_by_role("textbox", name="Streamable-HTTP URL").fill(oauth.url)
    page.get_by_role("button", name="Add the server").click()
    server = page.locator("[data-remote-server='notes']")
    sign_in_through_b(page, server.get_by_role("link", name="Sign in to notes"), pair)
    expect(server).to_contain_text("echo, stamp, slow_echo")

    server.get_by_role("button", name="Sign out").click()  # the next call must sign in
    upstream.plan(
        Behavior(text="Let me look.", tool_calls=[PlannedCall("echo", '{"text": "hello"}', "call_p1")]),
        Behavior(text="It said hello back."),
    )
    send(page, "echo hello")
    card = page.locator("[data-tool-call='call_p1']")
    sign_in_through_b(page, card.get_by_role("link", name="Sign in to notes"), pair)
    expect(card).to_have_attribute("data-tool-status", "done")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    tool = [m for m in upstream.last.messages if m["role"] == "tool"]
    assert tool[-1]["content"] == "echo: hello"
    stats = oauth.stats()
    assert stats["exchanged"] == 2 and stats["calls"] == 1


def test_a_callback_no_instance_waits_for_is_said_to_be_not_waiting_at_b(
    pair: AppsOnOneDatabase, open_page: Pages
) -> None:
    tab = open_page(None)
    answer = tab.goto(f"{pair.b.url}/oauth/callback?state=nobody-waits&code=anything")
    assert answer is not None and answer.status == 409
    expect(tab.get_by_role("status")).to_have_text(
        "This sign-in is not waiting any more (it was finished, cancelled, or the app restarted)."
    )
