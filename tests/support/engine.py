"""Engines for tests: real TinyDB files in a temp dir, litellm over real HTTP to the scripted upstream."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.engine import Engine
from engine.provider import ProviderConfig
from engine.settings import EngineSettings, Limits
from engine.tools.hub import ToolHub
from ledger.state import AttemptState
from store.tinydb.store import Store
from tests.support.upstream import ScriptedUpstream

TEST_KEY = "sk-test-not-a-real-key-123456"


def make_settings(base_url: str, **limits: Any) -> EngineSettings:
    provider = ProviderConfig(model="openai/test-model", api_base=base_url, api_key=TEST_KEY)
    values: dict[str, Any] = dict(first_chunk_timeout=5.0, idle_timeout=2.0, max_resends=2, resend_backoff=0.05)
    values.update(limits)
    return EngineSettings(provider=provider, limits=Limits(**values))


class EngineFactory:
    """Makes engines on the test's data dir; each is shut down and its store closed after the test."""

    def __init__(self, tmp_path: Path, upstream: ScriptedUpstream) -> None:
        self.tmp_path, self.upstream = tmp_path, upstream
        self.engines: list[Engine] = []

    def __call__(self, data_dir: Path | None = None, tools: ToolHub | None = None, **limits: Any) -> Engine:
        store = Store.open(data_dir or self.tmp_path / "data", flush_interval=0.05)
        engine = Engine(store, make_settings(self.upstream.base_url, **limits), tools)
        self.engines.append(engine)
        return engine

    async def close(self) -> None:
        for engine in self.engines:
            await engine.shutdown()
            engine.store.close()
            if engine.tools is not None:
                await engine.tools.stop()


def current_attempt(engine: Engine, cid: str, message_id: str) -> AttemptState:
    """The current attempt of a message, as the ledger's state has it."""
    conv = engine.conversation(cid)
    assert conv is not None, f"conversation {cid} is gone"
    attempt_id = conv.messages[message_id].current_attempt_id
    assert attempt_id is not None
    return conv.attempts[attempt_id]
