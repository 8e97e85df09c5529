"""The OAuth-protected MCP server of ``tests.support.oauth_server`` as a process the tests start, and what a
browser does with its sign-in link.

Guarantees: ``OAuthUpstream(ttl=...)`` starts the server on a free port and returns once its protected-resource
metadata answers (``url`` is its MCP endpoint); ``stats()`` is its counts (and every token it issued);
``expire()``, ``revoke_refresh()`` and ``allow_refresh()`` are its test controls; ``authorize(url)`` does what a
browser does with an authorization URL (the server approves at once) and returns the query of the redirect it
answers with (``code`` and ``state``, or ``error``), without following it; ``stop`` ends the process.
``running()`` is a fixture's body: a started server, stopped when the fixture's scope ends (also after a failure).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx

from tests.support.app_process import free_port


class OAuthUpstream:
    def __init__(self, ttl: int = 3600) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.url = f"{self.base}/mcp"
        env = {**os.environ, "LEDGERCHAT_OAUTH_TTL": str(ttl)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.oauth_server", str(self.port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.base}/.well-known/oauth-protected-resource/mcp", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)  # the poll interval of a condition wait (the server answering)
        self.stop()
        raise RuntimeError("the OAuth test server did not start in 30 s")

    def stats(self) -> dict[str, Any]:
        answer = httpx.get(f"{self.base}/test/stats", timeout=10)
        answer.raise_for_status()
        return dict(answer.json())

    def expire(self) -> None:
        httpx.post(f"{self.base}/test/expire", timeout=10).raise_for_status()

    def revoke_refresh(self) -> None:
        httpx.post(f"{self.base}/test/revoke-refresh", timeout=10).raise_for_status()

    def allow_refresh(self) -> None:
        httpx.post(f"{self.base}/test/allow-refresh", timeout=10).raise_for_status()

    async def authorize(self, url: str) -> dict[str, str]:
        async with httpx.AsyncClient() as client:
            answer = await client.get(url, timeout=10)
        assert answer.status_code in (302, 303, 307), (answer.status_code, answer.text[:300])
        return dict(parse_qsl(urlsplit(answer.headers["location"]).query))

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def running() -> Iterator[OAuthUpstream]:
    """A fixture's body (``yield from running()``): the server for the fixture's scope."""
    upstream = OAuthUpstream()
    try:
        yield upstream
    finally:
        upstream.stop()
