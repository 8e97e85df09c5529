"""Engines for tests: real TinyDB files in a temp dir, litellm over real HTTP to the scripted upstream.

``EngineFactory(..., check_ends=True)`` (the engine suite's ``engines``) also keeps every event each engine folds
and, after shutting the engines down, fails the test unless that ledger shows ``one_end_each`` attempt."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from engine.attempts.peers import ALONE, Peers
from engine.commands.assembly import Order, build_engine
from engine.commands.engine import Engine
from engine.provider.calls import ProviderConfig
from engine.tools.hub import ToolHub
from engine.turns.settings import EngineSettings, Limits
from ledger.events.core import AnyEvent
from ledger.state import AttemptState
from store.tinydb.store import Store
from tests.support.dialects import provider
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until

TEST_KEY = "sk-test-not-a-real-key-123456"


def make_settings(base_url: str, provider: ProviderConfig | None = None, **limits: Any) -> EngineSettings:
    """Settings for a test engine: short timeouts, ``limits`` as given, and ``titles=True`` when the test asks
    the model to name chats (``engine.policies.titles``; off otherwise, so a planned behaviour answers one request)."""
    provider = provider or ProviderConfig(model="openai/test-model", api_base=base_url, api_key=TEST_KEY)
    values: dict[str, Any] = dict(first_chunk_timeout=5.0, idle_timeout=2.0, max_resends=2, resend_backoff=0.05)
    titles = bool(limits.pop("titles", False))  # off unless a test asks
    values.update(limits)
    return EngineSettings(provider=provider, limits=Limits(**values), titles=titles)


class EngineFactory:
    """Makes engines on the test's data dir; each is shut down and its store closed after the test. ``dialect``
    (``tests.support.dialects``) is the provider dialect its engines call the upstream in (OpenAI's unless set)."""

    dialect = "openai"

    def __init__(
        self, tmp_path: Path, upstream: ScriptedUpstream, *, check_ends: bool = False, keep_tools: bool = False
    ) -> None:
        self.tmp_path, self.upstream, self.check_ends = tmp_path, upstream, check_ends
        self.keep_tools = keep_tools  # the hubs are the caller's (shared by a module's tests): never stopped here
        self.engines: list[Engine] = []
        self.seen: list[list[AnyEvent]] = []

    def __call__(
        self, data_dir: Path | None = None, tools: ToolHub | None = None, *, peers: Peers = ALONE,
        order: Order | None = None, **limits: Any,
    ) -> Engine:  # fmt: skip
        """An engine (``peers``: the other instances it asks; ``order``: its after-end reactions rearranged)."""
        store = Store.open(data_dir or self.tmp_path / "data", flush_interval=0.05)
        config = provider(self.dialect, self.upstream, TEST_KEY)
        settings = make_settings(self.upstream.base_url, config, **limits)
        engine = build_engine(store, settings, tools, peers=peers, order=order)
        self.engines.append(engine)
        seen: list[AnyEvent] = []
        self.seen.append(seen)
        engine.subscribe(seen.append)
        return engine

    async def close(self) -> None:
        problems: list[str] = []
        for engine, seen in zip(self.engines, self.seen, strict=True):
            await engine.shutdown()
            problems += one_end_each(seen) if self.check_ends else []
            engine.store.close()
            if engine.tools is not None and not self.keep_tools:
                await engine.tools.stop()
        assert not problems, "\n".join(problems)


TERMINAL = {"cancelled", "done", "recovered", "failed"}
AFTER_THE_END = {"stale_chunk", "stale_tool_result"}  # recorded for an ended attempt, never rendered
NAMING = {"selected"}  # the user choosing an attempt to show: about the attempt, not written by its run


def one_end_each(events: Iterable[AnyEvent]) -> list[str]:
    """What is wrong with how the attempts of these events ended (empty when nothing is): every attempt that was
    started, cancelled or ended here has at most one ``cancel_requested`` and exactly one end (``cancelled``,
    ``done``, ``recovered`` or a final ``failed``) followed at once by its one ``persisted``, and nothing but stale
    records after that."""
    by_attempt: dict[tuple[str, str], list[str]] = defaultdict(list)
    for event in events:
        attempt_id = getattr(event, "attempt_id", None)
        if attempt_id is not None and event.KIND not in NAMING:
            final = event.KIND in TERMINAL and not getattr(event, "will_retry", False)
            by_attempt[(event.conversation_id, attempt_id)].append("end" if final else event.KIND)
    problems = []
    for (cid, attempt_id), kinds in by_attempt.items():
        if not {"started", "cancel_requested", "end", "persisted"} & set(kinds):
            continue  # an attempt that ended before this engine started (a late stale record of it, say)
        if kinds.count("end") != 1 or kinds.count("persisted") != 1 or kinds.count("cancel_requested") > 1:
            problems.append(f"{cid}/{attempt_id} did not end exactly once: {kinds}")
            continue
        end = kinds.index("end")
        if kinds[end + 1 : end + 2] != ["persisted"] or not set(kinds[end + 2 :]) <= AFTER_THE_END:
            problems.append(f"{cid}/{attempt_id} wrote after its end: {kinds}")
    return problems


def current_attempt(engine: Engine, cid: str, message_id: str) -> AttemptState:
    """The current attempt of a message, as the ledger's state has it."""
    conv = engine.conversation(cid)
    assert conv is not None, f"conversation {cid} is gone"
    attempt_id = conv.messages[message_id].current_attempt_id
    assert attempt_id is not None
    return conv.attempts[attempt_id]


async def finished(engine: Engine, cid: str) -> None:
    """The turn running in ``cid`` has ended (here or elsewhere), within 20 s."""
    await wait_until(lambda: not engine.is_streaming(cid), 20, "the turn to end")


async def follow_up_is_accepted(engine: Engine, cid: str, upstream: ScriptedUpstream) -> list[dict[str, Any]]:
    """A next question is answered: the upstream, which checks a history as its provider does (every tool call with
    its one tool message), accepted it. Returns the messages it got."""
    upstream.plan(Behavior(text="fine"))
    _, message_id = await engine.submit(cid, "and now?")
    await finished(engine, cid)
    assert upstream.last.status == 200, "the provider rejected the history"
    assert current_attempt(engine, cid, message_id).status == "complete"
    return upstream.last.messages
