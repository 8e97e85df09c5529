"""Issue 35's one-time password links in real Chromium (``--accounts local``): a link from ``main.py users reset``
or from the accounts page's "Reset link" sets a new password once; the old password stops working, the new one
works, the account's old sessions are out and the browser that used the link is signed in. A used, an expired (made
with a clock a day behind: no waiting) and an unknown link get the same page; a post from another site is refused;
a disabled account gets no link; the token never reaches the app's log.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import pytest
from playwright.sync_api import Page, expect

from engine.people import LINK_GONE, RESET_VALID, People, ResetLinks
from store.accounts import FileAccounts
from tests.support.app_process import AppProcess
from tests.support.browser import Pages
from tests.support.people import PASSWORD, add_account, sign_in, users
from tests.support.waiting import wait_until_blocking

NEW = "a brand new long password"


@pytest.fixture(scope="module")
def app_options() -> tuple[str, ...]:
    return ("--accounts", "local")


@pytest.fixture(scope="module", autouse=True)
def accounts(app: AppProcess) -> None:
    add_account(app, "ann", admin=True)
    for name in ("ben", "cat", "dan", "eve", "fay", "gus"):
        add_account(app, name)


def link_from_the_command(app: AppProcess, name: str) -> str:
    done = users(app, "reset", name)
    assert done.returncode == 0, done.stderr
    (path,) = [line for line in done.stdout.splitlines() if line.startswith("/signin/reset/")]
    return app.url + path


def set_password(page: Page, link: str, password: str, repeat: str | None = None) -> None:
    page.goto(link)
    page.get_by_label("New password").fill(password)
    page.get_by_label("Repeat the password").fill(password if repeat is None else repeat)
    page.get_by_role("button", name="Set the password").click()


def sign_in_answer(app: AppProcess, name: str, password: str) -> int:
    with httpx.Client(base_url=app.url, headers={"origin": app.url}) as client:
        return client.post("/signin", data={"username": name, "password": password}).status_code


def test_a_link_from_users_reset_sets_a_new_password_once_and_ends_the_accounts_old_sessions(
    app: AppProcess, open_page: Pages
) -> None:
    old = sign_in(open_page(None), app, "ben")
    old_cookies = {c["name"]: c["value"] for c in old.context.cookies()}
    link = link_from_the_command(app, "ben")
    page = open_page(None)
    set_password(page, link, NEW, repeat="a different long password")
    expect(page.get_by_role("alert")).to_have_text("The two passwords are not the same; type them again.")
    set_password(page, link, "short")
    expect(page.get_by_role("alert")).to_have_text("A password needs at least 8 characters.")
    set_password(page, link, NEW)  # the link still held after both refusals
    expect(page.get_by_label("Message")).to_be_visible()  # signed in: the chat page
    expect(page.get_by_role("button", name="Account: ben")).to_be_visible()
    expect(old.get_by_label("Username")).to_be_visible()  # the old session's page went to the sign-in page
    with httpx.Client(base_url=app.url, cookies=old_cookies) as replayed:
        assert replayed.get("/export/conv_x").status_code == 401, "the old session's cookie opens nothing"
    assert sign_in_answer(app, "ben", PASSWORD) == 401, "the old password stopped working"
    sign_in(open_page(None), app, "ben", NEW)
    again = open_page(None)
    again.goto(link)  # the same link a second time
    expect(again.get_by_text(LINK_GONE)).to_be_visible()
    expect(again.get_by_label("New password")).to_have_count(0)
    assert link.rsplit("/", 1)[1] not in app.log.read_text(), "the token is never logged"


def test_a_used_an_expired_and_an_unknown_link_get_the_same_page_and_change_nothing(
    app: AppProcess, open_page: Pages
) -> None:
    people = People(FileAccounts(app.data_dir / "accounts.json"))  # beside the app: the file is locked per write
    a_day_ago = datetime.now(UTC) - RESET_VALID - timedelta(minutes=1)
    expired = ResetLinks(people, clock=lambda: a_day_ago).make("cat")
    used = ResetLinks(people).make("dan")
    ResetLinks(people).use(used, NEW)
    with httpx.Client(base_url=app.url, headers={"origin": app.url}) as client:
        answers = [client.get(f"/signin/reset/{t}") for t in (used, expired, "x" * 43)]
        posted = client.post(f"/signin/reset/{expired}", data={"password": NEW, "repeat": NEW})
    assert [a.status_code for a in (*answers, posted)] == [404] * 4
    assert len({a.text for a in (*answers, posted)}) == 1 and LINK_GONE in answers[0].text, "no oracle"
    assert "set-cookie" not in posted.headers and sign_in_answer(app, "cat", PASSWORD) == 303, "nothing changed"
    page = open_page(None)
    page.goto(f"{app.url}/signin/reset/{expired}")  # in the browser: the sentence, no form
    expect(page.get_by_role("alert")).to_have_text(LINK_GONE)
    expect(page.get_by_role("button", name="Set the password")).to_have_count(0)


def test_a_post_from_another_site_is_refused_and_the_link_still_holds(app: AppProcess, open_page: Pages) -> None:
    link = link_from_the_command(app, "eve")
    with httpx.Client(headers={"origin": "https://evil.example"}) as foreign:
        assert foreign.post(link, data={"password": NEW, "repeat": NEW}).status_code == 403
    page = open_page(None)
    set_password(page, link, NEW)
    expect(page.get_by_role("button", name="Account: eve")).to_be_visible()


def test_the_accounts_pages_reset_link_button_shows_a_working_link_once_with_a_copy_button(
    app: AppProcess, open_page: Pages
) -> None:
    assert users(app, "disable", "gus").returncode == 0
    admin = open_page(None, permissions=["clipboard-read", "clipboard-write"])
    sign_in(admin, app, "ann")
    admin.goto(app.url + "/admin/users")
    admin.get_by_role("button", name="Reset link for gus").click()
    expect(admin.get_by_role("alert")).to_have_text("gus is disabled: enable it first, then make a reset link.")
    admin.get_by_role("button", name="Reset link for fay").click()
    dialog = admin.get_by_role("dialog", name="Reset link for fay")
    expect(dialog).to_contain_text("A one-time link for fay")
    link = dialog.get_by_label("One-time link").input_value()
    assert link.startswith(f"{app.url}/signin/reset/") and len(link) > len(app.url) + 50
    dialog.get_by_role("button", name="Copy").click()
    wait_until_blocking(lambda: admin.evaluate("navigator.clipboard.readText()") == link, 15, "the link copied")
    dialog.get_by_role("button", name="Done").click()
    expect(admin.get_by_role("dialog")).to_have_count(0)
    assert link not in admin.content(), "shown once: the page no longer holds it"
    page = open_page(None)
    set_password(page, link, NEW)
    expect(page.get_by_role("button", name="Account: fay")).to_be_visible()
    assert sign_in_answer(app, "fay", PASSWORD) == 401
