"""Shared fixtures: a real OpenAI-compatible SSE upstream on 127.0.0.1, engines on real TinyDB files, and a real
PostgreSQL server (a throwaway cluster started once per session) with a fresh database per test."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

from store.tinydb.store import Store  # noqa: E402
from tests.support.app_process import CHROMIUM_ARGS, AppProcess  # noqa: E402
from tests.support.engine import EngineFactory  # noqa: E402
from tests.support.ledger_builders import conversation_events  # noqa: E402
from tests.support.postgres import PostgresCluster, unavailable_reason  # noqa: E402
from tests.support.stores import StoreMaker  # noqa: E402
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


@pytest.fixture(scope="session")
def token_app(tmp_path_factory: pytest.TempPathFactory, upstream_server: ScriptedUpstream) -> Iterator[AppProcess]:
    """The real app bound to every address (0.0.0.0), so with a generated token, on the scripted upstream; its
    data dir starts with one conversation, ``c1``. Reached on 127.0.0.1 (rate-limit tests use 127.0.0.2)."""
    data = tmp_path_factory.mktemp("token-app") / "data"
    store = Store.open(data)
    [store.append(e) for e in conversation_events("c1", answers=1, chunks=5)]
    store.close()
    process = AppProcess(data, upstream_server.base_url, host="0.0.0.0").start()
    yield process
    process.stop()


@pytest.fixture(scope="session")
def loopback_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    """The real app on the IPv6 loopback (::1), default settings: no token, the built-in demo model."""
    process = AppProcess(tmp_path_factory.mktemp("loopback") / "data", None, host="::1").start()
    yield process
    process.stop()


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PostgresCluster]:
    """A throwaway PostgreSQL cluster in a temp dir; tests that need it are skipped, saying why, without one."""
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    cluster = PostgresCluster().start()
    yield cluster
    cluster.stop()


@pytest.fixture
def database_url(pg_cluster: PostgresCluster) -> str:
    """The URL (with its password) of a fresh, empty database on the session's cluster."""
    return pg_cluster.new_database()


@pytest.fixture(params=["tinydb", "postgres"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreMaker]:
    """Opens stores of one kind on one location per test: a temp data dir, or a fresh PostgreSQL database."""
    location = request.getfixturevalue("database_url") if request.param == "postgres" else str(tmp_path / "data")
    maker = StoreMaker(request.param, location)
    yield maker
    maker.close_all()
