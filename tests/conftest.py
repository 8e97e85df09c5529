"""Shared fixtures: a real OpenAI-compatible SSE upstream on 127.0.0.1, and engines on real TinyDB files."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

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
