"""The strict front door, one test per leniency an adversarial pass found (issue 42), on the real app process over
real HTTP and real websocket handshakes: made-up ``X-Forwarded-For``, odd ``Host`` and ``Origin`` values,
``?token=`` outside a page load, a websocket without ``Origin``, and ``?name=`` on a download.
"""

from __future__ import annotations

import httpx
import pytest

from tests.support.app_process import AppProcess
from tests.support.app_runner import AppRunner
from tests.support.waiting import wait_until_blocking
from tests.support.websocket_probe import handshake

SOCKET_IO = "/_nicegui_ws/socket.io/?EIO=4&transport="
HTML = b"<!doctype html><html><body><script>alert(1)</script></body></html>"


def from_address(app: AppProcess, source: str, **kwargs: object) -> httpx.Client:
    return httpx.Client(base_url=app.url, transport=httpx.HTTPTransport(local_address=source), timeout=10, **kwargs)


def refusals_from(app: AppProcess, address: str) -> list[str]:
    return [x for x in app.log.read_text().splitlines() if f"refused a wrong access token from {address} " in x]


def test_a_made_up_x_forwarded_for_neither_escapes_the_limit_nor_reaches_the_log(token_app: AppProcess) -> None:
    with from_address(token_app, "127.0.0.3") as attacker:
        codes = [
            attacker.get(
                "/", headers={"authorization": f"Bearer wrong-token-{n:04d}", "x-forwarded-for": f"198.51.100.{n}"}
            ).status_code
            for n in range(12)
        ]
    assert codes == [401] * 10 + [429] * 2, "the limit is kept per real peer, whatever the header says"
    assert len(refusals_from(token_app, "127.0.0.3")) == 10
    assert "198.51.100." not in token_app.log.read_text()


def test_x_forwarded_for_is_believed_only_from_a_proxy_named_with_forwarded_allow_ips(run_app: AppRunner) -> None:
    with run_app("--forwarded-allow-ips", "127.0.0.5", host="0.0.0.0") as app:
        for source in ("127.0.0.5", "127.0.0.6"):
            with from_address(app, source) as http:
                forwarded = {"authorization": "Bearer wrong-token-xxxx", "x-forwarded-for": "203.0.113.7"}
                assert http.get("/", headers=forwarded).status_code == 401
        wait_until_blocking(lambda: len(refusals_from(app, "203.0.113.7")) == 1 and refusals_from(app, "127.0.0.6"))
        assert not refusals_from(app, "127.0.0.5"), "the named proxy's client is the one counted"


@pytest.mark.parametrize("which", ["token_app", "loopback_app"])
def test_odd_host_headers_and_origins_are_refused(which: str, request: pytest.FixtureRequest) -> None:
    app: AppProcess = request.getfixturevalue(which)
    auth = {"authorization": f"Bearer {app.token}"} if which == "token_app" else {}
    loopback = "127.0.0.1" if which == "token_app" else "[::1]"
    with httpx.Client(base_url=app.url, timeout=10, headers=auth) as http:
        assert http.get("/", headers={"origin": app.url}).status_code == 200
        for host in ("[::1]evil", "localhost:evil", f"[::1]:{app.port}x", f"localhost:{app.port}:1", "::1"):
            assert http.get("/", headers={"host": host}).status_code == 403, host
        for origin in (
            app.url.replace("http://", "https://"),  # another scheme
            app.url + "/",  # a trailing slash
            f"http://{loopback}",  # another port (80)
            f"http://user@{app.url.removeprefix('http://')}",
        ):
            refused = http.post(SOCKET_IO + "polling", headers={"origin": origin}, content=b"40")
            assert refused.status_code == 403, origin


def test_a_token_in_the_query_counts_only_on_a_page_load(token_app: AppProcess) -> None:
    token = token_app.token
    with httpx.Client(base_url=token_app.url, timeout=10) as script:
        assert script.get(f"/export/c1?token={token}").status_code == 401
        assert script.get(f"{SOCKET_IO}polling&token={token}").status_code == 401
        uploaded = script.post(f"/files?token={token}", files=[("file", ("a.txt", b"hello"))])
        assert uploaded.status_code == 401
        hop = script.get(f"/export/c1?token={token}", headers={"accept": "text/html"})
        assert hop.status_code == 200 and 'url=/export/c1"' in hop.text, "a page load signs in, then drops it"
        assert script.get("/export/c1").status_code == 200, "with the cookie it set"
    ws = handshake("127.0.0.1", token_app.port, f"{SOCKET_IO}websocket&token={token}", {"Origin": token_app.url})
    assert ws.status == 401


@pytest.mark.parametrize("which", ["token_app", "loopback_app"])
def test_a_websocket_without_origin_is_refused_in_every_mode(which: str, request: pytest.FixtureRequest) -> None:
    app: AppProcess = request.getfixturevalue(which)
    auth = {"Authorization": f"Bearer {app.token}"} if which == "token_app" else {}
    host = "127.0.0.1" if which == "token_app" else "::1"
    assert handshake(host, app.port, SOCKET_IO + "websocket", auth).status == 403
    assert handshake(host, app.port, SOCKET_IO + "websocket", {"Origin": app.url, **auth}).status == 101


def test_a_download_is_named_by_the_record_never_by_the_query(token_app: AppProcess) -> None:
    headers = {"authorization": f"Bearer {token_app.token}", "origin": token_app.url}
    with httpx.Client(base_url=token_app.url, timeout=10, headers=headers) as http:
        made = http.post("/files", files=[("file", ("report.txt", HTML + b"<!-- x -->"))])
        assert made.status_code == 200, made.text
        sha = made.json()[0]["sha256"]
        served = http.get(f"/files/{sha}", params={"name": "evil.html"})
        assert served.status_code == 200 and served.headers["content-type"] == "application/octet-stream"
        assert served.headers["content-disposition"].split(";")[1] == ' filename="report.txt"'
        assert "evil" not in served.headers["content-disposition"]
