"""Issue 35's OpenID Connect sign-in (``--accounts oidc``) against a real provider the tests start as a process
(``oidc-provider-mock``), reached through a proxy that can spoil a signature: a person signs in at the provider in
Chromium and is named and given a role by its claims; an ID token with a wrong issuer, audience or nonce, an
expired one and one with a bad signature are each refused with a sentence and make no session, as is someone
outside ``--oidc-member-group``; a provider that
does not answer is a sentence too; signing out ends the session.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import expect

from tests.support.app_process import AppProcess
from tests.support.app_runner import AppRunner
from tests.support.browser import Pages
from tests.support.oidc_provider import OidcProvider, SpoilingProxy
from tests.support.people import users


@pytest.fixture(scope="module")
def provider() -> Iterator[OidcProvider]:
    started = OidcProvider()
    yield started
    started.stop()


@pytest.fixture(scope="module")
def proxy(provider: OidcProvider) -> Iterator[SpoilingProxy]:
    spoiling = SpoilingProxy(provider.url)
    yield spoiling
    spoiling.stop()


@pytest.fixture(scope="module")
def app(run_app: AppRunner, proxy: SpoilingProxy) -> Iterator[AppProcess]:
    options = ("--accounts", "oidc", "--oidc-issuer", proxy.url, "--oidc-client-id", "ledger-chat")
    secret = {"LEDGERCHAT_OIDC_CLIENT_SECRET": "a-client-secret-for-tests"}  # from the environment only
    groups = ("--oidc-admin-group", "admins", "--oidc-member-group", "team")  # only the team gets in
    process = run_app.made(*options, *groups, env=secret)
    try:
        yield process.start(60)
    finally:
        run_app.stop(process)


def signed_in_by_script(app: AppProcess, sub: str, *, nonce: str | None = None) -> httpx.Response:
    """The whole flow as a browser would follow it, by hand: start, the provider's form, the callback."""
    with httpx.Client(base_url=app.url, timeout=20) as browser:
        start = browser.get("/signin/oidc?next=/")
        assert start.status_code == 303, start.text
        if nonce is not None:  # the sign-in's own nonce replaced: the token answers another sign-in
            import base64
            import json

            pending = json.loads(base64.urlsafe_b64decode(browser.cookies["lc_oidc"]))
            pending["nonce"] = nonce
            browser.cookies.set("lc_oidc", base64.urlsafe_b64encode(json.dumps(pending).encode()).decode())
        authorized = httpx.post(start.headers["location"], data={"sub": sub}, timeout=20)
        assert authorized.status_code == 302, authorized.text
        back = urlsplit(authorized.headers["location"])
        return browser.get(f"{back.path}?{back.query}")


def test_a_person_signs_in_at_the_provider_is_named_by_its_claims_and_signs_out(
    app: AppProcess, provider: OidcProvider, open_page: Pages
) -> None:
    provider.user("alice", name="Alice Example", email="alice@example.org", groups=["admins"])
    page = open_page(None)
    page.goto(app.url + "/")
    page.get_by_role("link", name=re.compile("Sign in with 127.0.0.1")).click()
    page.get_by_placeholder("sub").fill("alice")
    page.get_by_role("button", name="Authorize").click()
    expect(page.get_by_label("Message")).to_be_visible()
    page.get_by_role("button", name="Account: Alice Example").click()
    expect(page.get_by_text("Accounts", exact=True)).to_be_visible()  # the admin group's claim made her an admin
    page.get_by_text("Sign out", exact=True).click()
    expect(page.get_by_role("link", name=re.compile("Sign in with"))).to_be_visible()


def test_someone_the_provider_vouches_for_outside_the_member_group_is_refused_and_gets_no_account(
    app: AppProcess, provider: OidcProvider
) -> None:
    provider.user("outsider", name="Out Sider", groups=["contractors"])
    before = users(app, "list").stdout.splitlines()
    answer = signed_in_by_script(app, "outsider")
    assert answer.status_code == 401 and "not in the group that may use it" in unescape(answer.text)
    assert "lc_session" not in answer.headers.get("set-cookie", "")
    assert users(app, "list").stdout.splitlines() == before, "no account was made"
    provider.user("insider", name="In Sider", groups=["team"])
    assert signed_in_by_script(app, "insider").status_code == 303, "the team's member gets in"


@pytest.mark.parametrize(
    ("claims", "nonce", "why"),
    [
        ({"iss": "http://evil.example"}, None, "it was issued by another provider"),
        ({"aud": "another-app"}, None, "it was issued for another application"),
        ({"exp": 1_000_000_000}, None, "it has expired"),
        ({}, "another-sign-in", "it answers another sign-in"),
    ],
    ids=["issuer", "audience", "expired", "nonce"],
)
def test_an_id_token_that_fails_a_check_is_refused_with_a_sentence_and_makes_no_session(
    app: AppProcess, provider: OidcProvider, claims: dict[str, object], nonce: str | None, why: str
) -> None:
    provider.user(f"bad-{why[:12].replace(' ', '-')}", **claims)
    answer = signed_in_by_script(app, f"bad-{why[:12].replace(' ', '-')}", nonce=nonce)
    assert answer.status_code == 401 and why in unescape(answer.text) and "Nobody was signed in" in answer.text
    assert "lc_session" not in answer.headers.get("set-cookie", "")


def test_an_id_token_whose_signature_was_changed_is_refused(
    app: AppProcess, provider: OidcProvider, proxy: SpoilingProxy
) -> None:
    provider.user("mallory", name="Mallory", groups=["team"])
    with proxy.fault("spoil_signature"):
        answer = signed_in_by_script(app, "mallory")
    assert answer.status_code == 401 and "its signature does not match the provider's keys" in unescape(answer.text)
    assert "lc_session" not in answer.headers.get("set-cookie", "")
    assert signed_in_by_script(app, "mallory").status_code == 303, "the same person, untouched, gets in"


def test_a_provider_that_goes_down_during_a_sign_in_gets_a_sentence_not_an_error_page(
    app: AppProcess, provider: OidcProvider, proxy: SpoilingProxy
) -> None:
    provider.user("dora", name="Dora", groups=["team"])
    with proxy.fault("token_down"):
        answer = signed_in_by_script(app, "dora")
    assert answer.status_code == 401 and "does not answer as expected" in unescape(answer.text)
    assert signed_in_by_script(app, "dora").status_code == 303, "once it is back, the same sign-in works"


def test_a_callback_this_browser_did_not_start_is_refused(app: AppProcess) -> None:
    with httpx.Client(base_url=app.url) as stranger:
        answer = stranger.get("/signin/oidc/callback?code=x&state=y")
    assert answer.status_code == 401 and "was not started here" in answer.text
