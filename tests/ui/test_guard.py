"""The front door of the real app process, over real HTTP and real websocket handshakes (no mocks).

Two apps: ``token_app`` bound to 0.0.0.0 (so a token is required, generated and printed at start-up) and a
loopback app on ::1 (open to the local browser, the default) that also runs the demo model through the front door.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from demo.server.endpoint import MAX_BODY_BYTES
from tests.support.app_process import ROOT, AppProcess
from tests.support.app_runner import AppRunner
from tests.support.websocket_probe import handshake
from ui.guard import SECURITY_HEADERS

SOCKET_IO = "/_nicegui_ws/socket.io/?EIO=4&transport="


def client(app: AppProcess, **kwargs: object) -> httpx.Client:
    return httpx.Client(base_url=app.url, timeout=10, **kwargs)


def test_without_the_token_pages_export_and_websockets_are_refused_and_with_it_they_work(token_app: AppProcess) -> None:
    token = token_app.token
    routes = ["/", "/chat/c1", "/export/c1", SOCKET_IO + "polling"]
    with client(token_app) as anonymous:
        for route in routes:
            refused = anonymous.get(route)
            assert refused.status_code == 401, route
            assert token not in refused.text and "Authorization: Bearer" in refused.text
    assert handshake("127.0.0.1", token_app.port, SOCKET_IO + "websocket", {"Origin": token_app.url}).status == 401

    with client(token_app) as browser:
        signed_in = browser.get(f"/chat/c1?token={token}", headers={"accept": "text/html"})
        assert signed_in.status_code == 200 and 'url=/chat/c1"' in signed_in.text, "on to the address without token"
        cookie = signed_in.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and token not in cookie
        assert browser.get("/chat/c1").status_code == 200
        exported = browser.get("/export/c1")
        assert exported.status_code == 200
        assert [json.loads(line)["kind"] for line in exported.text.splitlines()][:2] == ["created", "submitted"]
        assert browser.get(SOCKET_IO + "polling").text.startswith('0{"sid":')
        cookie_header = "; ".join(f"{k}={v}" for k, v in browser.cookies.items())
    opened = handshake(
        "127.0.0.1", token_app.port, SOCKET_IO + "websocket", {"Cookie": cookie_header, "Origin": token_app.url}
    )
    assert opened.status == 101 and opened.first_frame.startswith(b'0{"sid":')
    with client(token_app, headers={"authorization": f"Bearer {token}"}) as script:
        assert script.get("/export/c1").status_code == 200


def test_the_start_up_line_prints_the_generated_token_url_and_ipv6_in_brackets(
    token_app: AppProcess, loopback_app: AppProcess
) -> None:
    line = next(x for x in token_app.log.read_text().splitlines() if x.startswith("Ledger Chat on "))
    assert line.startswith(f"Ledger Chat on http://0.0.0.0:{token_app.port} — open http://127.0.0.1:")
    assert f"/?token={token_app.token} — model:" in line
    line = next(x for x in loopback_app.log.read_text().splitlines() if x.startswith("Ledger Chat on "))
    assert line.startswith(f"Ledger Chat on http://[::1]:{loopback_app.port} — model: demo") and "token" not in line


@pytest.mark.parametrize("which", ["token_app", "loopback_app"])
def test_a_foreign_host_and_a_foreign_origin_get_403_on_every_bind(which: str, request: pytest.FixtureRequest) -> None:
    app: AppProcess = request.getfixturevalue(which)
    auth = {"authorization": f"Bearer {app.token}"} if which == "token_app" else {}
    host = "127.0.0.1" if which == "token_app" else "::1"
    with client(app, headers=auth) as http:
        assert http.get("/").status_code == 200
        assert http.get("/", headers={"host": f"attacker.example:{app.port}"}).status_code == 403
        assert http.get("/", headers={"host": f"localhost.attacker.example:{app.port}"}).status_code == 403
        foreign = {"origin": "http://attacker.example"}
        assert http.post(SOCKET_IO + "polling", headers=foreign, content=b"40").status_code == 403
        assert http.get(SOCKET_IO + "polling", headers=foreign).status_code == 403
    same = handshake(host, app.port, SOCKET_IO + "websocket", {"Origin": app.url, **auth})
    assert same.status == 101, "the app's own page may open its websocket"
    for origin in ("http://attacker.example", "null", f"http://127.0.0.1:{app.port + 1}"):
        assert handshake(host, app.port, SOCKET_IO + "websocket", {"Origin": origin, **auth}).status == 403, origin
    rebinding = handshake(host, app.port, SOCKET_IO + "websocket", {"Host": f"attacker.example:{app.port}", **auth})
    assert rebinding.status == 403


def test_every_response_carries_the_security_headers(token_app: AppProcess, loopback_app: AppProcess) -> None:
    with client(loopback_app) as http:
        page = http.get("/")
        static = http.get(next(s for s in page.text.split('"') if s.endswith("/static/nicegui.js")))
        responses = [page, static, http.get("/no/such/page.txt"), http.get("/", headers={"host": "evil.example"})]
    with client(token_app) as http:
        responses.append(http.get("/"))
    assert [r.status_code for r in responses] == [200, 200, 404, 403, 401]
    for response in responses:
        for name, value in SECURITY_HEADERS:
            assert response.headers.get(name) == value, (response.url, name)
    csp = page.headers["content-security-policy"]
    assert "img-src 'self' data:" in csp and "frame-ancestors 'none'" in csp and "connect-src 'self'" in csp


def test_wrong_tokens_are_refused_rate_limited_per_address_and_logged_without_the_token_and_the_right_one_still_works(
    token_app: AppProcess,
) -> None:
    other = httpx.HTTPTransport(local_address="127.0.0.2")  # its own address: 127.0.0.1 is not limited
    wrong = "not-the-token-" + "x" * 30
    with httpx.Client(base_url=token_app.url, transport=other, timeout=10) as attacker:
        codes = [attacker.get("/", headers={"authorization": f"Bearer {wrong}{n}"}).status_code for n in range(12)]
        assert codes == [401] * 10 + [429] * 2
        limited = attacker.get("/", headers={"authorization": f"Bearer {wrong}"})
        assert limited.status_code == 429 and "try again in" in limited.text
        right = attacker.get("/", headers={"authorization": f"Bearer {token_app.token}"})
        assert right.status_code == 200, "the limit never refuses the right token (a shared proxy's users)"
        signed_in = attacker.get(f"/?token={token_app.token}", headers={"accept": "text/html"})
        assert signed_in.status_code == 200 and "set-cookie" in signed_in.headers
    with client(token_app, headers={"authorization": f"Bearer {token_app.token}"}) as owner:
        assert owner.get("/").status_code == 200, "another address is not locked out"
    log = token_app.log.read_text()
    refused = [line for line in log.splitlines() if "refused a wrong access token from 127.0.0.2" in line]
    assert len(refused) == 10 and "(10 in the last minute)" in refused[-1]
    assert wrong not in log and token_app.token not in log.replace(f"?token={token_app.token}", "", 1)


@pytest.mark.solo  # a time per request, measured with nothing else running (tasks.py test)
def test_a_wrong_token_is_refused_at_once_without_a_slowdown(token_app: AppProcess) -> None:
    other = httpx.HTTPTransport(local_address="127.0.0.3")  # an address of its own, below the rate limit
    with httpx.Client(base_url=token_app.url, transport=other, timeout=10) as guesser:
        assert guesser.get("/", headers={"authorization": "Bearer warm-up"}).status_code == 401
        started = time.perf_counter()
        codes = [guesser.get("/", headers={"authorization": f"Bearer wrong-{n}"}).status_code for n in range(5)]
        per_try_ms = (time.perf_counter() - started) * 1000 / 5
    assert codes == [401] * 5
    assert per_try_ms < 250, "no delay per wrong token (a few ms on an idle machine; 2.5x the old bound)"


def test_a_non_loopback_bind_with_no_token_refuses_to_start_in_one_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "--host", "0.0.0.0", "--no-token", "--data-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("ledger-chat: --no-token: refusing to serve 0.0.0.0 without a token")
    assert not list(tmp_path.iterdir()), "nothing was started or written"


def test_the_demo_model_answers_through_the_front_door_on_an_ipv6_loopback_bind(loopback_app: AppProcess) -> None:
    body = {"model": "ledger-demo", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    with client(loopback_app) as http:
        answer = http.post("/demo/v1/chat/completions", json=body)
        assert answer.status_code == 200 and "data: [DONE]" in answer.text
        assert http.post("/demo/v1/chat/completions", content=b"not json").status_code == 400
        huge = http.post("/demo/v1/chat/completions", content=b"x" * (MAX_BODY_BYTES + 1))
        assert huge.status_code == 413


def test_a_token_given_on_a_loopback_bind_is_required_there_too_and_never_printed(run_app: AppRunner) -> None:
    token = "given-token-" + "t" * 20
    with run_app("--token", token, demo_model=True) as app:
        with client(app) as http:
            assert http.get("/").status_code == 401
            assert http.get("/", headers={"authorization": f"Bearer {token}"}).status_code == 200
            assert http.get(f"/?token={token}x").status_code == 401
        line = next(x for x in app.log.read_text().splitlines() if x.startswith("Ledger Chat on "))
        assert line.startswith(f"Ledger Chat on http://127.0.0.1:{app.port} (access token required) — model: demo")
        assert token not in app.log.read_text()
