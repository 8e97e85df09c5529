"""Shared fixtures: a real OpenAI-compatible SSE upstream on 127.0.0.1, and engines on real TinyDB files."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

from engine.engine import Engine  # noqa: E402
from engine.provider import ProviderConfig  # noqa: E402
from engine.settings import EngineSettings  # noqa: E402
from engine.upstream import Upstream, serve_in_thread  # noqa: E402
from ledger.store import Store  # noqa: E402


class LocalUpstream(Upstream):
    base_url: str


@pytest.fixture(scope="session")
def upstream_server() -> Iterator[LocalUpstream]:
    server = LocalUpstream(chunk_delay=0.01)
    base, stop = serve_in_thread(server)
    server.base_url = base
    yield server
    stop()


@pytest.fixture
def upstream(upstream_server: LocalUpstream) -> LocalUpstream:
    upstream_server.reset()
    return upstream_server


def make_settings(base_url: str, **overrides) -> EngineSettings:  # type: ignore[no-untyped-def]
    provider = ProviderConfig(model="openai/test-model", api_base=base_url, api_key="sk-test-not-a-real-key-123456")
    values = dict(provider=provider, first_chunk_timeout=5.0, idle_timeout=2.0, max_resends=2, resend_backoff=0.05)
    values.update(overrides)
    return EngineSettings(**values)  # type: ignore[arg-type]


class EngineFactory:
    def __init__(self, tmp_path: Path, upstream: LocalUpstream) -> None:
        self.tmp_path, self.upstream = tmp_path, upstream
        self.engines: list[Engine] = []

    def __call__(self, data_dir: Path | None = None, **overrides) -> Engine:  # type: ignore[no-untyped-def]
        store = Store.open(data_dir or self.tmp_path / "data", flush_interval=0.05)
        engine = Engine(store, make_settings(self.upstream.base_url, **overrides))
        self.engines.append(engine)
        return engine


@pytest.fixture
async def engines(tmp_path: Path, upstream: LocalUpstream) -> AsyncIterator[EngineFactory]:
    factory = EngineFactory(tmp_path, upstream)
    yield factory
    for engine in factory.engines:
        await engine.shutdown()
        engine.store.close()


async def wait_for(condition, timeout: float = 10.0, interval: float = 0.005):  # type: ignore[no-untyped-def]
    """Wait for a condition (never a fixed sleep); fail with a clear message on timeout."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = condition()
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        await asyncio.sleep(interval)
