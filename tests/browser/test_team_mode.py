"""Issue 35 in real Chromium: a team shares one app (``--accounts local``). Two people sign in from two browser
contexts; each reaches only their own chats, and every route tried with someone else's id answers as for a
missing one. Signing out, and an admin disabling an account, take the person's pages to the sign-in page; a
disabled account's running answer ends interrupted with source ``account``, its prefix kept.

Routes B tries with A's ids (each listed in the test that tries it): the chat list, ``/chat/<A's id>``, the search
dialog, ``/export/<A's id>``, ``/files/<A's hash>`` and its thumbnail, and socket events naming A's page.
"""

from __future__ import annotations

import httpx
import pytest
import requests
import socketio  # type: ignore[import-untyped]
from playwright.sync_api import Page, expect

from tests.support.app_process import AppProcess
from tests.support.big_png import flat_png
from tests.support.browser import Pages, conversation_id, last_answer, open_audit, send, wait_words
from tests.support.people import PASSWORD, add_account, exported, sign_in, users
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until_blocking

MISSING = "That conversation does not exist"


@pytest.fixture(scope="module")
def app_options() -> tuple[str, ...]:
    return ("--accounts", "local", "--admin-can-read")


@pytest.fixture(scope="module", autouse=True)
def accounts(app: AppProcess) -> None:
    add_account(app, "ann", admin=True)
    for name in ("ben", "cat"):
        add_account(app, name)


def cookie_of(page: Page) -> dict[str, str]:
    return {c["name"]: c["value"] for c in page.context.cookies()}


def test_a_stranger_gets_the_sign_in_page_and_nothing_else(app: AppProcess) -> None:
    with httpx.Client(base_url=app.url) as client:
        page = client.get("/chat/conv_x", headers={"accept": "text/html"})
        assert page.status_code == 303 and page.headers["location"] == "/signin?next=%2Fchat%2Fconv_x"
        for path in ("/export/conv_x", "/files/" + "0" * 64, "/_nicegui_ws/socket.io/?EIO=4&transport=polling"):
            assert client.get(path).status_code == 401, path
        form = client.get("/signin")
        assert form.status_code == 200 and 'for="username">Username' in form.text and "<script" not in form.text
        assert form.headers["content-security-policy"].startswith("default-src 'self'")


def test_a_wrong_name_and_a_wrong_password_get_the_same_sentence_and_no_cookie(app: AppProcess) -> None:
    with httpx.Client(base_url=app.url, headers={"origin": app.url}) as client:
        answers = [
            client.post("/signin", data={"username": name, "password": password})
            for name, password in (("ann", "not the password"), ("nobody", PASSWORD))
        ]
    assert [a.status_code for a in answers] == [401, 401]
    assert "That username and password do not match an account." in answers[0].text
    assert answers[0].text.replace("ann", "") == answers[1].text.replace("nobody", "")
    assert all("set-cookie" not in a.headers for a in answers)


def test_two_people_each_reach_only_their_own_chats_on_every_route(
    app: AppProcess, open_page: Pages, upstream: ScriptedUpstream
) -> None:
    a = sign_in(open_page(None), app, "ann")
    upstream.plan(Behavior(text="The alpha plan is ready."))
    send(a, "alpha plan, please")
    expect(last_answer(a)).to_have_attribute("data-status", "complete")
    cid = conversation_id(a)
    with httpx.Client(base_url=app.url, cookies=cookie_of(a), headers={"origin": app.url}) as as_a:
        sent = as_a.post("/files", files={"files": ("dot.png", flat_png(8, 8, 3, 8), "image/png")})
        assert sent.status_code == 200, sent.text
        sha = sent.json()[0]["sha256"]
        assert as_a.get(f"/files/{sha}").status_code == 200, "the sender reads the file"
        assert as_a.get(f"/export/{cid}").status_code == 200

    b = sign_in(open_page(None), app, "ben")
    expect(b.locator(f'[data-conversation="{cid}"]')).to_have_count(0)  # the chat list
    assert "alpha" not in b.locator(".lc-chats-drawer").inner_text()
    b.goto(f"{app.url}/chat/{cid}")  # the chat's address
    expect(b.get_by_text(MISSING)).to_be_visible()
    expect(b).to_have_url(f"{app.url}/")
    b.get_by_role("button", name="Search chats (Ctrl+K)").click()  # the search dialog
    b.get_by_role("textbox", name="Search chats").fill("alpha")
    expect(b.get_by_text("Nothing found.")).to_be_visible()
    with httpx.Client(base_url=app.url, cookies=cookie_of(b)) as as_b:
        for path in (f"/export/{cid}", f"/files/{sha}", f"/files/{sha}/thumb"):  # the export and the file
            assert as_b.get(path).status_code == 404, path
        assert as_b.get("/export/conv_none").text == as_b.get(f"/export/{cid}").text, "as for a missing id"
    expect(last_answer(a).locator(".lc-body")).to_have_text("The alpha plan is ready.")  # A's page is untouched
    open_audit(a)
    expect(a.get_by_text("sent by ann", exact=False).first).to_be_visible()  # the audit names who sent it


def test_a_socket_signed_in_as_one_person_cannot_press_anothers_buttons(app: AppProcess, open_page: Pages) -> None:
    a = sign_in(open_page(None), app, "ann")
    b = sign_in(open_page(None), app, "ben")
    victim = a.evaluate("() => window.clientId")
    signed_in_as_b = requests.Session()  # every request of the socket carries B's session, as B's browser would
    signed_in_as_b.cookies.update(cookie_of(b))
    intruder = socketio.Client(reconnection=False, http_session=signed_in_as_b)
    intruder.connect(
        app.url, socketio_path="/_nicegui_ws/socket.io", transports=["polling"], headers={"Origin": app.url}
    )
    try:
        intruder.emit("event", {"id": 1, "client_id": victim, "listener_id": "x", "args": []})
        wait_until_blocking(
            lambda: "refused a socket.io message" in app.log.read_text(), 10, "the refusal in the server log"
        )
    finally:
        intruder.disconnect()
    expect(a.get_by_label("Message")).to_be_visible()


def test_an_admin_adds_and_disables_accounts_on_the_accounts_page_and_a_member_finds_no_such_page(
    app: AppProcess, open_page: Pages
) -> None:
    member = sign_in(open_page(None), app, "cat")
    member.goto(app.url + "/admin/users")
    expect(member.get_by_text("There is nothing at this address.")).to_be_visible()
    member.goto(app.url + "/")
    admin = sign_in(open_page(None), app, "ann")
    admin.get_by_role("button", name="Account: ann").click()
    admin.get_by_text("Accounts", exact=True).click()
    expect(admin.locator("[data-account]")).to_have_count(3)
    admin.get_by_label("Username").fill("gus")
    admin.get_by_label("Password").fill("short")
    admin.get_by_role("button", name="Add").click()
    expect(admin.get_by_role("alert")).to_have_text("A password needs at least 8 characters.")
    expect(admin.get_by_label("Password")).to_have_value("")  # a password never stays on the page
    admin.get_by_label("Password").fill(PASSWORD)
    admin.get_by_role("button", name="Add").click()
    expect(admin.locator('[data-account="gus"]')).to_contain_text("member")
    assert "$argon2" not in admin.content(), "no hash on the page"
    admin.get_by_role("button", name="Disable cat").click()
    expect(admin.locator('[data-account="cat"]')).to_contain_text("disabled")
    expect(member.get_by_label("Username")).to_be_visible(timeout=4_000)  # out within two seconds
    admin.get_by_role("button", name="Enable cat").click()
    expect(admin.locator('[data-account="cat"]')).to_contain_text("active")
    sign_in(member, app, "cat")


def test_signing_out_or_in_again_ends_the_session_held_before_and_its_cookie_opens_nothing_after(
    app: AppProcess, open_page: Pages
) -> None:
    page = sign_in(open_page(None), app, "cat")
    old = cookie_of(page)
    page.get_by_role("button", name="Account: cat").click()
    page.get_by_text("Sign out", exact=True).click()
    expect(page.get_by_label("Username")).to_be_visible()
    with httpx.Client(base_url=app.url, cookies=old) as replayed:  # the old cookie, replayed
        assert replayed.get("/export/conv_x").status_code == 401
    again = sign_in(page, app, "cat")  # signing in again in the same browser ends the session held before
    held = cookie_of(again)
    again.goto(app.url + "/signin")
    again.get_by_label("Username").fill("cat")
    again.get_by_label("Password").fill(PASSWORD)
    again.get_by_role("button", name="Sign in").click()
    expect(again.get_by_label("Message")).to_be_visible()
    with httpx.Client(base_url=app.url, cookies=held) as replayed:
        assert replayed.get("/export/conv_x").status_code == 401
    with httpx.Client(base_url=app.url, cookies=cookie_of(again)) as current:
        assert current.get("/export/conv_x").status_code == 404, "the new one works (a missing chat: 404)"


def test_a_disabled_account_is_out_within_two_seconds_and_its_answer_ends_interrupted_by_account(
    app: AppProcess, open_page: Pages, upstream: ScriptedUpstream
) -> None:
    add_account(app, "dan")
    page = sign_in(open_page(None), app, "dan")
    upstream.plan(Behavior(text=" ".join(f"w{n}" for n in range(2000)), chunk_delay=0.02))
    send(page, "a long story")
    cid = conversation_id(page)
    wait_words(page, 10)
    done = users(app, "disable", "dan")
    assert done.returncode == 0 and "1 session(s) ended" in done.stdout, done.stderr
    expect(page.get_by_label("Username")).to_be_visible(timeout=4_000)  # two seconds, and the page's load
    wait_until_blocking(lambda: upstream.last.disconnected_at is not None, 10, "the upstream closed")
    events = exported(app, cid, having="persisted")
    cancel = [e for e in events if e["kind"] == "cancel_requested"]
    assert [(c["source"], c["keep_partial"]) for c in cancel] == [("account", True)]
    assert [e["source"] for e in events if e["kind"] == "cancelled"] == ["account"]
    kept = [e for e in events if e["kind"] == "persisted"]
    assert kept and kept[-1]["status"] == "interrupted" and str(kept[-1]["text"]).startswith("w0 w1"), "prefix kept"
    assert [e["actor"] for e in events if e["kind"] == "submitted"] == ["local:dan"]
    assert [e["owner"] for e in events if e["kind"] == "created"] == ["local:dan"]


def test_an_admins_read_of_a_chat_is_recorded_first_and_its_owner_sees_it_in_the_audit_panel(
    app: AppProcess, open_page: Pages, upstream: ScriptedUpstream
) -> None:
    owner = sign_in(open_page(None), app, "ben")
    upstream.plan(Behavior(text="The budget is 40 k."))
    send(owner, "budget for the offsite")
    expect(last_answer(owner)).to_have_attribute("data-status", "complete")
    cid = conversation_id(owner)
    open_audit(owner)
    member = sign_in(open_page(None), app, "cat")
    for path in ("/admin/read", f"/admin/read/{cid}"):  # a member: as an unknown address, and nothing recorded
        member.goto(app.url + path)
        expect(member.get_by_text("There is nothing at this address.")).to_be_visible()
    admin = sign_in(open_page(None), app, "ann")
    admin.goto(app.url + "/admin/users")
    admin.get_by_role("button", name="Read a person's chats").click()
    admin.get_by_role("button", name="ben", exact=True).click()
    row = admin.locator(f'[data-chat="{cid}"]')
    expect(row).to_contain_text("Begun")
    assert "budget" not in admin.locator("body").inner_text(), "the list never shows a title or text"
    assert [e["kind"] for e in exported(app, cid)].count("read_by") == 0, "listing is not reading"
    row.get_by_role("button").click()
    expect(admin.get_by_text("budget for the offsite")).to_be_visible()
    expect(admin.get_by_role("status")).to_contain_text("You are reading ben's chat as an admin.")
    assert not admin.get_by_label("Message").count(), "read-only: nothing on the page changes it"
    expect(owner.get_by_text("Read by ann on", exact=False)).to_be_visible()  # live, in the owner's audit panel
    reads = [e for e in exported(app, cid, having="read_by") if e["kind"] == "read_by"]
    assert [(e["actor"], e["name"]) for e in reads] == [("local:ann", "ann")]
    expect(owner.locator(f'[data-conversation="{cid}"]')).to_have_count(1)


def test_each_persons_presets_are_their_own_and_only_an_admin_shares_or_changes_a_shared_one(
    app: AppProcess, open_page: Pages
) -> None:
    ben = sign_in(open_page(None), app, "ben")
    ben.goto(app.url + "/presets")
    ben.get_by_role("button", name="New preset").click()
    expect(ben.get_by_label("Name")).to_have_value("")  # the new, empty form replaced the default's
    ben.get_by_label("Name").fill("Ben's helper")
    ben.get_by_role("button", name="Save the preset").click()
    expect(ben.get_by_role("button", name="Open preset Ben's helper")).to_contain_text("(yours)")
    expect(ben.get_by_role("switch", name="Share with everyone")).to_have_count(0)  # a member shares nothing
    cat = sign_in(open_page(None), app, "cat")
    cat.goto(app.url + "/presets")
    expect(cat.get_by_role("button", name="Open preset Default")).to_contain_text("(shared)")
    expect(cat.get_by_role("button", name="Open preset Ben's helper")).to_have_count(0)
    expect(cat.get_by_text("Only an admin can change it", exact=False)).to_be_visible()  # the default: read-only
    expect(cat.get_by_role("button", name="Save the preset")).to_have_count(0)
    admin = sign_in(open_page(None), app, "ann")
    admin.goto(app.url + "/presets")
    admin.get_by_role("button", name="New preset").click()
    expect(admin.get_by_label("Name")).to_have_value("")
    admin.get_by_label("Name").fill("House style")
    admin.get_by_role("switch", name="Share with everyone").click()
    admin.get_by_role("button", name="Save the preset").click()
    expect(admin.get_by_role("button", name="Open preset House style")).to_contain_text("(shared)")
    cat.goto(app.url + "/")
    cat.get_by_role("combobox", name="Agent preset for the next answer").click()
    expect(cat.get_by_role("option", name="House style")).to_be_visible()
    expect(cat.get_by_role("option", name="Ben's helper")).to_have_count(0)
