"""A real OpenID Connect provider for the tests (``oidc-provider-mock``, from PyPI, as a process of its own) and a
proxy in front of it that can spoil what the provider signed.

Guarantees: ``OidcProvider`` starts ``python -m oidc_provider_mock`` on a free port and returns once its discovery
document answers; ``user(sub, **claims)`` sets a person's claims (the provider puts them in the ID token, over its
own: a test gives a token a wrong ``iss``, ``aud``, ``exp`` or ``nonce`` this way, still signed by the provider's
key); ``stop`` ends it. ``SpoilingProxy`` forwards every request to the provider with its own address as the Host
(so the provider names the proxy as issuer and in every endpoint), and while ``spoil_signature`` is set changes one
character of the signature of each ID token the token endpoint returns; while ``token_down`` is set the token
endpoint answers 503, as a provider that went down in the middle of a sign-in.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

from tests.support.app_process import free_port


class OidcProvider:
    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "oidc_provider_mock", "--port", str(self.port), "--host", "127.0.0.1"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/.well-known/openid-configuration", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)  # the poll interval of a condition wait (the provider answering)
        self.stop()
        raise RuntimeError("the OpenID Connect provider did not start in 30 s")

    def user(self, sub: str, **claims: object) -> None:
        answer = httpx.put(f"{self.url}/users/{sub}", json=claims, timeout=10)
        assert answer.status_code == 204, answer.text

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


class SpoilingProxy:
    def __init__(self, target: str) -> None:
        self.target, self.spoil_signature, self.token_down = target, False, False
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                self._forward()

            def do_POST(self) -> None:  # noqa: N802
                self._forward()

            def _forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                if proxy.token_down and self.path.startswith("/oauth2/token"):  # as a provider that went down
                    self.send_response(503)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("content-length",)}
                answer = httpx.request(self.command, proxy.target + self.path, headers=headers, content=body)
                content = answer.content
                if proxy.spoil_signature and self.path.startswith("/oauth2/token") and answer.status_code == 200:
                    token = answer.json()
                    head, claims, signature = token["id_token"].split(".")
                    token["id_token"] = ".".join((head, claims, ("A" if signature[0] != "A" else "B") + signature[1:]))
                    content = json.dumps(token).encode()
                self.send_response(answer.status_code)
                for key, value in answer.headers.items():
                    if key.lower() not in ("content-length", "content-encoding", "transfer-encoding", "connection"):
                        self.send_header(key, value)
                self.send_header("content-length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

            def log_message(self, *_: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, name="oidc-proxy", daemon=True).start()

    @contextmanager
    def fault(self, name: str) -> Iterator[None]:
        """``spoil_signature`` or ``token_down`` set for the block (cleared after it, even after a failure)."""
        setattr(self, name, True)
        try:
            yield
        finally:
            setattr(self, name, False)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
