"""MCP tasks and identity against the demo server over stdio: a tool that requires task-augmented calls is not
offered to the model (the pinned SDK's client cannot make such calls) and says why; the client introduces itself
as ledger-chat with the app's version."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from engine.tools.hub import ToolHub
from engine.tools.mcp_server import TASKS_REQUIRED
from ledger.events.core import ToolDispatched, ToolResult
from tests.support.engine import EngineFactory
from tests.support.tools import ROOT, demo_hub
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream
from tests.support.waiting import wait_until

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_a_task_required_tool_is_not_offered_and_a_call_to_it_anyway_is_answered_without_running(
    hub_engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    # ``execution.taskSupport`` is a 2025-11-25 field (tasks are an extension at 2026-07-28): that revision
    hub, _ = await demo_hub(tmp_path, protocol="2025-11-25")
    (health,) = hub.health()
    assert [(w.name, w.reason) for w in health.withheld] == [("batch_report", TASKS_REQUIRED)]
    assert "batch_report" not in health.tools and hub.resolve("batch_report") is None
    engine = hub_engines(tools=hub)
    cid = engine.create_conversation()
    upstream.plan(
        Behavior(text="", tool_calls=[PlannedCall("batch_report", '{"days": 7}', "call_t")]), Behavior(text="ok")
    )
    await engine.submit(cid, "the weekly report please")
    await wait_until(lambda: not engine.is_streaming(cid), 20, "the turn to end")
    assert "batch_report" not in upstream.records[0].tools and "draw_chart" in upstream.records[0].tools
    (result,) = [e for e in engine.events(cid) if isinstance(e, ToolResult)]
    assert result.status == "error" and result.content == f"The tool 'batch_report' was not run: it {TASKS_REQUIRED}."
    assert not [e for e in engine.events(cid) if isinstance(e, ToolDispatched)]  # the server never got the call
    await hub.stop()


async def test_the_server_sees_the_client_as_ledger_chat_with_the_apps_version(hub: ToolHub) -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    outcome = await hub.call("demo", "whoami", {}, None)
    assert outcome.text == f"ledger-chat {version}" and not outcome.is_error
