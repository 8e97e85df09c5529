"""Child process for the orphaned-tool-call tests (issue 40): in one process, for every dialect, three agent turns
each held at one moment between a tool call and its result, then it waits to be killed.

The moments (``MOMENTS``), each its own conversation in the dialect's own data folder (``<root>/<dialect>``):
- ``called``: the model's tool call is recorded (its step finished) and the call was never dispatched;
- ``running``: the call was dispatched to the demo tool server and runs (``slow_task``, a minute);
- ``answered``: the call's result is recorded and the next model call was never made.
The turns run one after another, so the upstream (in the test process) answers their first requests in the
order ``tool_requests`` plans; each holds at its moment by ``engine.turns.turn.run_tools`` not returning (before
or after the real one, as the moment needs). Every event is saved (the store flushed) before the child prints
``HELD <json: {dialect: {moment: [conversation, answer]}}>``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import engine.turns.turn as turn_module
from engine.commands.assembly import build_engine
from engine.provider.calls import ProviderConfig
from ledger.state import AttemptState
from store.tinydb.store import Store
from tests.support.dialects import DIALECTS, MODELS
from tests.support.engine import TEST_KEY, current_attempt, make_settings
from tests.support.tools import demo_hub
from tests.support.upstream import Behavior, PlannedCall

MOMENTS = ("called", "running", "answered")
CALLS = {
    "called": PlannedCall("calculator", '{"expression": "2+2"}'),
    "running": PlannedCall("slow_task", '{"seconds": 60}'),
    "answered": PlannedCall("calculator", '{"expression": "3+4"}'),
}


def tool_requests() -> list[Behavior]:
    """What the upstream answers the child's requests with, in the order it makes them."""
    return [Behavior(text="", tool_calls=[CALLS[moment]], chunk_delay=0) for _ in DIALECTS for moment in MOMENTS]


def held_at(moment: str, attempt: AttemptState) -> bool:
    """Whether the turn reached its moment (see the module)."""
    call = next(iter(attempt.tool_calls.values()), None)  # (its one call: Gemini and Ollama send no call ids)
    if call is None:
        return False
    if moment == "called":
        return call.phase == "ready"
    if moment == "running":
        return call.phase == "running"
    return call.answered


async def main(root: str, base_url: str) -> None:
    hub, _ = await demo_hub(Path(tempfile.mkdtemp(prefix="lc-tools-")))
    holding: dict[str, str] = {}  # conversation -> moment
    real_run_tools = turn_module.run_tools

    async def run_tools(run: Any, *args: Any) -> None:
        moment = holding.get(run.conversation_id)
        if moment != "called":
            await real_run_tools(run, *args)
        if moment is not None:
            await asyncio.Event().wait()  # held here until the kill

    turn_module.run_tools = run_tools  # type: ignore[assignment]
    held: dict[str, dict[str, list[str]]] = {}
    for dialect in DIALECTS:
        api_base = base_url if dialect == "openai" else base_url.removesuffix("/v1")
        config = ProviderConfig(model=MODELS[dialect], api_base=api_base, api_key=TEST_KEY)
        store = Store.open(Path(root) / dialect, flush_interval=0.05)
        engine = build_engine(store, make_settings(base_url, config), hub)
        held[dialect] = {}
        for moment in MOMENTS:
            cid = engine.create_conversation()
            holding[cid] = moment
            _, message_id = await engine.send(cid, f"use a tool ({moment})")
            while not held_at(moment, current_attempt(engine, cid, message_id)):
                attempt = current_attempt(engine, cid, message_id)
                assert attempt.is_live, f"{dialect}/{moment} ended: {attempt.status} {attempt.error_summary}"
                await asyncio.sleep(0.01)  # the poll interval of a condition wait, not a synchronization sleep
            held[dialect][moment] = [cid, message_id]
        assert await engine.store.flush()
    print(f"HELD {json.dumps(held)}", flush=True)
    await asyncio.sleep(3600)  # held until the test kills this process


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
