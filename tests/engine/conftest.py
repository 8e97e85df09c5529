"""The engine suite's engines: each test's ledger must show that every attempt ended exactly once. Modules that
share one demo tool server (``hub``) run on the module's loop (``pytestmark = pytest.mark.asyncio(loop_scope=
"module")``) and take ``hub_engines``, which leave that hub running. ``oauth``: the OAuth-protected MCP server,
one per test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from engine.tools.hub import ToolHub
from tests.support.engine import EngineFactory
from tests.support.oauth_upstream import OAuthUpstream, running
from tests.support.tools import demo_hub
from tests.support.upstream import ScriptedUpstream


@pytest.fixture
async def engines(tmp_path: Path, upstream: ScriptedUpstream) -> AsyncIterator[EngineFactory]:
    """Like the shared ``engines``, and after the test (the engines shut down) the ledger each engine wrote is
    checked by ``one_end_each``: one end and one ``persisted`` per attempt, in every scenario of this suite."""
    factory = EngineFactory(tmp_path, upstream, check_ends=True)
    yield factory
    await factory.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def hub(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[ToolHub]:
    """The demo tool server over stdio, started once for the module (its blobs: the hub's own MemoryBlobs)."""
    started, _ = await demo_hub(tmp_path_factory.mktemp("module-tools"))
    yield started
    await started.stop()


@pytest_asyncio.fixture(loop_scope="module")
async def hub_engines(tmp_path: Path, upstream: ScriptedUpstream) -> AsyncIterator[EngineFactory]:
    """``engines`` on the module's loop; the module's ``hub`` is left running when they shut down."""
    factory = EngineFactory(tmp_path, upstream, check_ends=True, keep_tools=True)
    yield factory
    await factory.close()


@pytest.fixture
def oauth() -> Iterator[OAuthUpstream]:
    """The OAuth-protected MCP server (``tests.support.oauth_upstream``), one for each test (its tokens and counts
    start empty)."""
    yield from running()
