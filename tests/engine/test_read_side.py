"""The read side is the only place the engine's state changes, and what it holds is a replay of the ledger."""

from __future__ import annotations

import ast
from pathlib import Path

from ledger.reducer import replay
from tests.support.engine import EngineFactory, current_attempt
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]


def test_only_the_read_side_assigns_the_engines_state() -> None:
    assigned = set()
    for path in sorted((ROOT / "engine").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            for target in targets if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign) else ():
                if isinstance(target, ast.Attribute) and target.attr in ("state", "_state"):
                    assigned.add(path.relative_to(ROOT).as_posix())
    assert assigned == {"engine/read/side.py"}


async def test_after_a_stop_a_retry_and_a_rename_the_state_is_the_replay_of_the_stored_events(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="one two three " * 40, chunk_delay=0.01), Behavior(text="again"))
    _, answer = await engine.submit(cid, "count")
    await wait_until(lambda: current_attempt(engine, cid, answer).chunks_rendered >= 3, 30, "the answer streaming")
    await engine.cancel(cid, "user")
    await engine.retry(cid)
    await wait_until(lambda: not engine.is_streaming(cid), what="the retry ending")
    engine.rename(cid, "counted")
    assert engine.conversation(cid) == replay(engine.store.events(cid)).conversations[cid]
    assert engine.state.conversations[cid] == engine.conversation(cid)
