"""The way back from a tool server's sign-in page (``/oauth/callback``) through the front door, on the real app
over real HTTP: behind a token it first loads itself again from this site (the SameSite=Strict cookie a cross-site
redirect does not bring then comes along), and only then is the token checked; a sign-in nobody waits for is
answered as such, and nothing of the query is shown."""

from __future__ import annotations

import httpx

from tests.support.app_process import AppProcess
from tests.support.app_runner import AppRunner


def test_the_callback_hops_once_for_its_cookie_and_then_needs_the_token(token_app: AppProcess) -> None:
    with httpx.Client(base_url=token_app.url, timeout=10) as http:
        first = http.get("/oauth/callback?code=c0de&state=st4te")
        assert first.status_code == 200
        assert (
            'http-equiv="refresh"' in first.text and "/oauth/callback?code=c0de&amp;state=st4te&amp;hop=1" in first.text
        )
        assert http.get("/oauth/callback?code=c0de&state=st4te&hop=1").status_code == 401
        signed = http.get(
            "/oauth/callback?code=c0de&state=st4te&hop=1", headers={"authorization": f"Bearer {token_app.token}"}
        )
    assert signed.status_code == 409
    assert "This sign-in is not waiting any more" in signed.text and "c0de" not in signed.text
    assert signed.headers["cache-control"] == "no-store"


def test_with_an_https_public_address_the_client_metadata_document_is_public_and_names_the_way_back(
    run_app: AppRunner,
) -> None:
    options = ("--public-url", "https://chat.example.org/", "--accounts", "local")
    with run_app(*options) as app, httpx.Client(base_url=app.url, timeout=10) as http:
        document = http.get("/oauth/client.json")  # no session: an authorization server reads it
        assert http.get("/").status_code in (303, 401)  # everything else still needs a sign-in
    assert document.status_code == 200
    assert document.json() == {
        "client_id": "https://chat.example.org/oauth/client.json",
        "client_name": "Ledger Chat",
        "redirect_uris": ["https://chat.example.org/oauth/callback"],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }


def test_without_a_public_address_there_is_no_client_metadata_document(token_app: AppProcess) -> None:
    with httpx.Client(base_url=token_app.url, timeout=10) as http:
        assert http.get("/oauth/client.json").status_code == 404
