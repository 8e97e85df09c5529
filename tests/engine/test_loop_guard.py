"""The loop guard against runaway identical tool calls (pi #9637: 220 identical calls), and the step limit's own end.

A model that asks for the same tool with the same arguments ``--loop-guard`` times in a row (default 3) ends its
turn before the step limit, with a sentence in the ledger, the audit and the export; the last call is not run; the
history stays one every provider accepts. A model that varies its arguments is not stopped by the guard.
"""

from __future__ import annotations

import json
from pathlib import Path

from engine.turns.loop_guard import LoopGuard
from ledger.codec import to_jsonl
from ledger.events.core import ToolResult
from ledger.folds.audit import audit
from tests.support.engine import EngineFactory, current_attempt, finished, follow_up_is_accepted
from tests.support.tools import demo_hub
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream


def same_call_forever(n: int, arguments: str = '{"expression": "2+2"}') -> list[Behavior]:
    return [Behavior(text="", tool_calls=[PlannedCall("calculator", arguments, f"call_{i}")]) for i in range(n)]


async def test_the_same_call_three_times_in_a_row_ends_the_turn_with_the_loop_guards_sentence(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    hub, _ = await demo_hub(tmp_path)
    engine = engines(tools=hub)  # the step limit is 8: the guard ends it first
    cid = engine.create_conversation()
    upstream.plan(*same_call_forever(20))
    _, m1 = await engine.submit(cid, "add forever")
    await finished(engine, cid)
    attempt = current_attempt(engine, cid, m1)
    said = "The model called calculator 3 times in a row with the same arguments; the loop guard stopped the turn."
    assert (attempt.status, attempt.error_type, attempt.error_summary) == ("failed", "tool_loop", said)
    assert len(upstream.records) == 3, "no model call after the guard tripped"
    results = {e.call_id: e for e in engine.events(cid) if isinstance(e, ToolResult)}
    assert [results[f"call_{i}"].status for i in range(3)] == ["ok", "ok", "not_run"]
    assert "loop guard" in results["call_2"].content
    (card,) = audit(engine.events(cid))
    assert any(p.kind == "failed" and (p.error_type, p.summary) == ("tool_loop", said) for p in card.phases)
    exported = [json.loads(line) for line in to_jsonl(engine.events(cid))]
    assert any(e["kind"] == "failed" and e["error_type"] == "tool_loop" and e["summary"] == said for e in exported)
    upstream.reset()  # the calls planned beyond the guard were never asked for
    sent = await follow_up_is_accepted(engine, cid, upstream)
    assert [m["role"] for m in sent] == ["user", "user"], "a failed turn stays out of the history"


async def test_a_model_that_varies_its_arguments_is_not_stopped_by_the_guard(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    hub, _ = await demo_hub(tmp_path)
    engine = engines(tools=hub, max_steps=5)
    cid = engine.create_conversation()
    calls = [PlannedCall("calculator", json.dumps({"expression": f"{n}+1"}), f"call_{n}") for n in range(5)]
    upstream.plan(*[Behavior(text="", tool_calls=[call]) for call in calls])
    _, m1 = await engine.submit(cid, "count up")
    await finished(engine, cid)
    attempt = current_attempt(engine, cid, m1)
    assert (attempt.status, attempt.error_type) == ("failed", "step_limit"), attempt.error_summary
    assert attempt.error_summary == "The model kept asking for tools; the turn stopped at the step limit (5 steps)."
    assert len(upstream.records) == 5


async def test_with_the_guard_off_the_same_call_runs_until_the_step_limit(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    hub, _ = await demo_hub(tmp_path)
    engine = engines(tools=hub, max_steps=4, loop_guard=0)
    cid = engine.create_conversation()
    upstream.plan(*same_call_forever(4))
    _, m1 = await engine.submit(cid, "add forever")
    await finished(engine, cid)
    assert current_attempt(engine, cid, m1).error_type == "step_limit" and len(upstream.records) == 4


def test_the_guard_counts_in_a_row_across_steps_and_within_one_and_ignores_key_order_and_spacing() -> None:
    guard = LoopGuard(3)
    assert guard.check([("f", '{"a": 1, "b": 2}')]) is None
    assert guard.check([("f", '{"b":2,"a":1}')]) is None
    tripped = guard.check([("f", ' {"a":1, "b":2} ')])
    assert tripped is not None and (tripped.name, tripped.times) == ("f", 3)
    parallel = LoopGuard(3)
    assert parallel.check([("g", "{}"), ("g", "{}"), ("g", "{}")]) is not None, "three at once count too"
    broken = LoopGuard(3)
    assert broken.check([("f", "{}"), ("f", "{}"), ("h", "{}"), ("f", "{}"), ("f", "{}")]) is None
    assert broken.check([("f", '{"x": 1}')]) is None, "other arguments start the count again"
