"""MCP servers over streamable HTTP for the tests: ``python -m <module> --http PORT`` (the demo tool server,
``tests.support.context_server``) started in its own process and stopped after.

``serve_http(module)`` is a generator (for a fixture's ``yield from``): it yields the server's ``/mcp`` URL once
the server answers there (a condition wait, 30 s at most, failing at once when the process ended), and stops it
when closed.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator

import httpx

from tests.support.app_process import free_port
from tests.support.tools import ROOT

__all__ = ["answers", "serve_http"]


def serve_http(module: str) -> Iterator[str]:
    """``python -m <module> --http PORT`` until the generator is closed; its URL while it runs."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", module, "--http", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 30
        while not answers(url):
            assert time.monotonic() < deadline and proc.poll() is None, f"{module} did not start"
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def answers(url: str) -> bool:
    """Whether anything answers HTTP at ``url`` (after a 50 ms pause when nothing does: the poll's interval)."""
    try:
        httpx.get(url, timeout=1)
    except httpx.HTTPError:
        time.sleep(0.05)
        return False
    return True
