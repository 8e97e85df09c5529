"""Shared fixtures: a real OpenAI-compatible SSE upstream on 127.0.0.1, and engines on real TinyDB files."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

from tests.support.app_process import CHROMIUM_ARGS  # noqa: E402
from tests.support.engine import EngineFactory  # noqa: E402
from tests.support.upstream import ScriptedUpstream, serve  # noqa: E402


@pytest.fixture(scope="session")
def upstream_server() -> Iterator[ScriptedUpstream]:
    yield from serve(chunk_delay=0.01)


@pytest.fixture
def upstream(upstream_server: ScriptedUpstream) -> ScriptedUpstream:
    upstream_server.reset()
    return upstream_server


@pytest.fixture
async def engines(tmp_path: Path, upstream: ScriptedUpstream) -> AsyncIterator[EngineFactory]:
    factory = EngineFactory(tmp_path, upstream)
    yield factory
    await factory.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """One headless Chromium (Debian's) per browser test module; each test opens its own context."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()
