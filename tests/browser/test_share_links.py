"""Issue 36's share links in real Chromium, in team mode: "Share" makes a link shown once; a public link shows a
stranger the read-only snapshot (the interrupted marker, every attempt browsable, nothing written after it, no
script, noindex, no referrer); a members-only link sends a stranger to sign in and back, where "Continue in a copy"
makes a chat of their own; revoking answers 404 at once; a disabled owner's link answers 404 like an unknown one."""

from __future__ import annotations

import json

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.support.app_process import AppProcess
from tests.support.browser import Pages, conversation_id, last_answer, send, wait_words
from tests.support.people import PASSWORD, add_account, exported, sign_in, users
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.websocket_probe import handshake

STORY = " ".join(f"word{i}" for i in range(400))


@pytest.fixture(scope="module")
def app_options() -> tuple[str, ...]:
    return ("--accounts", "local")


@pytest.fixture(scope="module", autouse=True)
def accounts(app: AppProcess) -> None:
    add_account(app, "ann", admin=True)
    for name in ("ben", "dan"):
        add_account(app, name)


def share(page: Page, *, anyone: bool = False) -> str:
    """Press Share, choose who may open it, create the link; the link the dialog shows once."""
    page.get_by_role("button", name="Share", exact=True).click()
    dialog = page.get_by_role("dialog")
    if anyone:
        dialog.get_by_text("Anyone with the link").click()
    dialog.get_by_role("button", name="Create link").click()
    link = dialog.get_by_role("textbox", name="Link")
    expect(link).not_to_have_value("")
    url = link.input_value()
    dialog.get_by_role("button", name="Close").click()
    expect(page.get_by_role("dialog")).to_have_count(0)  # closed: Enter in the box then sends (fresh run 62)
    return url


def stopped_then_retried(page: Page, upstream: ScriptedUpstream) -> None:
    upstream.plan(Behavior(text=STORY, chunk_delay=0.02))
    send(page, "tell me a story")
    wait_words(page, 6)
    page.get_by_role("button", name="Stop").click()
    expect(last_answer(page)).to_have_attribute("data-status", "interrupted")
    upstream.plan(Behavior(text="The second attempt, complete.", chunk_delay=0.0))
    last_answer(page).get_by_role("button", name="Retry").click()
    expect(last_answer(page)).to_have_attribute("data-status", "complete")


def test_a_public_link_shows_a_stranger_the_snapshot_read_only_with_the_stop_and_every_attempt(
    app: AppProcess, open_page: Pages, upstream: ScriptedUpstream
) -> None:
    ann = sign_in(open_page(None), app, "ann")
    stopped_then_retried(ann, upstream)
    cid = conversation_id(ann)
    url = share(ann, anyone=True)
    assert url.startswith(app.url + "/s/") and len(url.rsplit("/", 1)[1]) == 22, "128 random bits"
    upstream.plan(Behavior(text="Written after the share.", chunk_delay=0.0))
    send(ann, "a later secret question")
    expect(last_answer(ann)).to_have_attribute("data-status", "complete")

    stranger = open_page(None)
    stranger.goto(url)
    expect(stranger.get_by_text("Snapshot of")).to_be_visible()
    expect(stranger.locator("section.user")).to_have_text("tell me a story")
    answer = stranger.locator("section.assistant")
    expect(answer).to_have_attribute("data-attempt", "2/2")
    expect(answer.get_by_text("The second attempt, complete.")).to_be_visible()
    first = answer.locator("details").filter(has_text="Attempt 1 of 2")
    expect(first.get_by_text("Stopped", exact=True)).to_be_hidden()
    first.locator("summary").click()  # the attempts browser: the stopped one, one click away
    expect(first.locator("[data-marker=interrupted]")).to_have_text("Stopped")
    expect(first.get_by_text("word5")).to_be_visible()
    assert "a later secret" not in stranger.content() and "Written after" not in stranger.content()
    expect(stranger.get_by_text("Continue in a copy")).to_have_count(0)  # not signed in

    with httpx.Client(base_url=app.url) as client:
        got = client.get(url.removeprefix(app.url), headers={"accept": "text/html"})
    assert got.status_code == 200 and "<script" not in got.text and "_nicegui" not in got.text
    assert got.headers["x-robots-tag"] == "noindex, nofollow" and got.headers["referrer-policy"] == "no-referrer"
    assert got.headers["content-security-policy"].startswith("default-src 'self'")
    assert '<meta name="robots" content="noindex, nofollow">' in got.text
    kinds = [e["kind"] for e in exported(app, cid, having="share_opened")]  # an open is written within 250 ms
    assert kinds.count("share_created") == 1 and "share_opened" in kinds
    token = url.rsplit("/", 1)[1]
    assert token not in json.dumps(exported(app, cid)), "the token never reaches the ledger"


def test_a_members_only_link_sends_a_stranger_to_sign_in_then_continue_in_a_copy_makes_their_own_chat(
    app: AppProcess, open_page: Pages, upstream: ScriptedUpstream
) -> None:
    ann = sign_in(open_page(None), app, "ann")
    upstream.plan(Behavior(text="Members only answer.", chunk_delay=0.0))
    send(ann, "for the team")
    expect(last_answer(ann)).to_have_attribute("data-status", "complete")
    url = share(ann)  # team mode's default: signed-in members

    ben = open_page(None)
    ben.goto(url)
    ben.wait_for_url(lambda u: "/signin?next=" in u)
    ben.get_by_label("Username").fill("ben")
    ben.get_by_label("Password").fill(PASSWORD)
    ben.get_by_role("button", name="Sign in").click()
    ben.wait_for_url(lambda u: u == url)
    expect(ben.get_by_text("Members only answer.")).to_be_visible()
    ben.get_by_role("link", name="Continue in a copy").click()
    ben.wait_for_function("() => window.did_handshake === true")
    ben.get_by_role("button", name="Make my copy").click()
    ben.wait_for_url(lambda u: "/chat/" in u)
    expect(last_answer(ben)).to_contain_text("Members only answer.")
    copy = exported(app, conversation_id(ben))
    assert copy[0]["kind"] == "created" and copy[0]["owner"] == "local:ben" and copy[0].get("branched_from") is None
    upstream.plan(Behavior(text="Going on in my copy.", chunk_delay=0.0))
    send(ben, "and then?")
    expect(last_answer(ben)).to_have_attribute("data-status", "complete")


def test_a_revoked_link_and_a_disabled_owners_link_answer_404_like_an_unknown_one(
    app: AppProcess, open_page: Pages, upstream: ScriptedUpstream
) -> None:
    dan = sign_in(open_page(None), app, "dan")
    upstream.plan(Behavior(text="Dan's answer.", chunk_delay=0.0))
    send(dan, "dan's question")
    expect(last_answer(dan)).to_have_attribute("data-status", "complete")
    kept, revoked = share(dan, anyone=True), share(dan, anyone=True)
    dan.goto(app.url + "/shares")
    expect(dan.locator("[data-share]")).to_have_count(2)
    dan.locator("[data-share]").first.get_by_role("button", name="Revoke").click()
    expect(dan.locator("[data-share]")).to_have_count(1)
    with httpx.Client(base_url=app.url) as client:
        unknown = client.get("/s/AAAAAAAAAAAAAAAAAAAAAA")
        assert unknown.status_code == 404
        statuses = {u: client.get(u.removeprefix(app.url)).status_code for u in (kept, revoked)}
        assert sorted(statuses.values()) == [200, 404], "the newest was revoked, the other still opens"
        gone = next(u for u, s in statuses.items() if s == 404)
        assert client.get(gone.removeprefix(app.url)).text == unknown.text, "the same page as an unknown link"
        still = next(u for u, s in statuses.items() if s == 200)
        assert users(app, "disable", "dan").returncode == 0
        refused = client.get(still.removeprefix(app.url))
        assert refused.status_code == 404 and refused.text == unknown.text
    host, port = app.url.removeprefix("http://").rsplit(":", 1)
    for path in (still.removeprefix(app.url), kept.removeprefix(app.url)):  # no websocket of any kind on the route
        assert handshake(host, int(port), path, {"Origin": app.url}).status != 101
    users(app, "enable", "dan")
