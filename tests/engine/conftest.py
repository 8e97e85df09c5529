"""The engine suite's engines: each test's ledger must show that every attempt ended exactly once."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.engine import EngineFactory
from tests.support.upstream import ScriptedUpstream


@pytest.fixture
async def engines(tmp_path: Path, upstream: ScriptedUpstream) -> AsyncIterator[EngineFactory]:
    """Like the shared ``engines``, and after the test (the engines shut down) the ledger each engine wrote is
    checked by ``one_end_each``: one end and one ``persisted`` per attempt, in every scenario of this suite."""
    factory = EngineFactory(tmp_path, upstream, check_ends=True)
    yield factory
    await factory.close()
