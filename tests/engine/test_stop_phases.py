"""Stop that does not stop (cherry-studio #7589, cloudflare/agents #1233, vercel/ai #6502, LibreChat #15514): the
two phases of an agent turn where no HTTP stream is open to close, so a Stop could miss the next model call.

- during an automatic re-send's back-off (a 500 before the first chunk, the re-send waiting its turn);
- between a tool's result and the next model call (the step's results are in, the next request not yet sent).

In both: no model request starts after the Stop (none after ``cancel_requested`` in the ledger, none reaches the
upstream: a request the engine had begun as the Stop came is closed before it is sent), the attempt ends once, and
the next question is answered with a history the provider accepts.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from ledger.events.core import AnyEvent, ToolResult
from tests.support.engine import EngineFactory, current_attempt, finished, follow_up_is_accepted
from tests.support.tools import demo_hub
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream
from tests.support.waiting import nothing_more_for, wait_until


def kinds(events: list[AnyEvent]) -> list[str]:
    return [e.KIND for e in events]


async def test_stop_during_a_resends_back_off_sends_no_request_afterwards(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines(resend_backoff=1.5)
    cid = engine.create_conversation()
    upstream.plan(Behavior(status=500), Behavior(text="SHOULD NOT BE ASKED"))
    _, m1 = await engine.submit(cid, "hello")
    await wait_until(lambda: "retrying" in kinds(engine.events(cid)), 10, "the re-send to be scheduled")
    assert await engine.cancel(cid, "user")
    await finished(engine, cid)
    await nothing_more_for(2.0)  # past the back-off: the re-send would have gone by now
    assert len(upstream.records) == 1, "a request was sent after the Stop"
    events = kinds(engine.events(cid))
    assert events.count("request_sent") == 1 and events.index("cancel_requested") > events.index("retrying")
    attempt = current_attempt(engine, cid, m1)
    assert attempt.status == "empty" and attempt.cancel_source == "user"
    sent = await follow_up_is_accepted(engine, cid, upstream)
    assert [m["role"] for m in sent] == ["user", "user"]


async def test_stop_between_a_tools_result_and_the_next_model_call_sends_no_request_afterwards(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    hub, _ = await demo_hub(tmp_path)
    engine = engines(tools=hub)
    cid = engine.create_conversation()
    call = PlannedCall("calculator", '{"expression": "6*7"}', "call_between")
    upstream.plan(Behavior(text="Let me compute.", tool_calls=[call]), Behavior(text="SHOULD NOT BE ASKED"))
    store: Any = engine.store
    append = store.append
    stops: list[asyncio.Task[bool]] = []

    def append_then_stop(event: AnyEvent) -> AnyEvent:
        stored: AnyEvent = append(event)
        if isinstance(event, ToolResult) and not stops:  # the Stop is pressed the moment the result is in
            stops.append(asyncio.get_running_loop().create_task(engine.cancel(cid, "user")))
        return stored

    store.append = append_then_stop
    try:
        _, m1 = await engine.submit(cid, "what is 6 times 7?")
        await finished(engine, cid)
    finally:
        store.append = append
    assert stops and await stops[0]
    await nothing_more_for(0.5)
    events = engine.events(cid)
    assert len(upstream.records) == 1, "the next model call started after the Stop"
    after_stop = kinds(events)[kinds(events).index("cancel_requested") :]
    assert "request_sent" not in after_stop and "step_started" not in after_stop, " ".join(kinds(events))
    (result,) = [e for e in events if isinstance(e, ToolResult)]
    assert (result.call_id, result.status, result.content) == ("call_between", "ok", "6*7 = 42")
    attempt = current_attempt(engine, cid, m1)
    assert attempt.status == "interrupted" and attempt.text == "Let me compute."
    sent = await follow_up_is_accepted(engine, cid, upstream)
    assert [m.get("tool_call_id") for m in sent if m["role"] == "tool"] == ["call_between"]
