"""Cancel by transport, proven by the server: Stop during a running call makes the server's handler see the
cancel, over stdio and over streamable HTTP (a real SDK server process on 127.0.0.1), on both revisions a server
can negotiate (2025-11-25: ``notifications/cancelled``; 2026-07-28 over HTTP: the request's stream is closed); and
a tool's question over streamable HTTP on both revisions."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from engine.commands.engine import Engine
from engine.tools.config import ServerConfig
from engine.tools.hub import ToolHub
from engine.turns import questions
from ledger.events.core import QuestionAsked, ToolResult
from tests.support.app_process import free_port
from tests.support.engine import EngineFactory
from tests.support.ports import port_open
from tests.support.tools import ROOT, demo_server_config, server_record
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream
from tests.support.waiting import wait_until

REVISIONS = ["2025-11-25", "2026-07-28"]


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The demo tool server over streamable HTTP, its own process; its URL and record file."""
    port, record = free_port(), tmp_path / "http-record.jsonl"
    env = {**os.environ, "LEDGERCHAT_DEMO_TOOL_RECORD": str(record)}
    process = subprocess.Popen(
        [sys.executable, "-m", "demo.tools_server", "--http", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield f"http://127.0.0.1:{port}/mcp", record
    finally:
        process.kill()
        process.wait(timeout=10)


async def stop_during_slow_task(engine: Engine, record: Path, upstream: ScriptedUpstream) -> tuple[float, dict]:
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="", tool_calls=[PlannedCall("slow_task", '{"seconds": 8}', "call_slow")]))
    await engine.submit(cid, "run the slow job")
    await wait_until(lambda: [r for r in server_record(record) if r["event"] == "slow_task_started"], 20, "the call")
    stopped_at = time.time()
    assert await engine.cancel(cid, "user")
    grace = engine.settings.limits.tool_grace
    seen = await wait_until(
        lambda: [r for r in server_record(record) if r["event"] == "slow_task_cancelled"], grace, "the server's cancel"
    )
    (result,) = [e for e in engine.events(cid) if isinstance(e, ToolResult)]
    assert result.status == "cancelled" and "told to cancel" in result.content
    return seen[0]["t"] - stopped_at, seen[0]


@pytest.mark.parametrize("rev", REVISIONS)
async def test_stop_during_a_call_over_streamable_http_the_servers_handler_saw_the_cancel(
    engines: EngineFactory, upstream: ScriptedUpstream, http_server: tuple[str, Path], rev: str
) -> None:
    url, record = http_server
    await wait_until(partial(port_open, int(url.split(":")[2].split("/")[0])), 20, "the HTTP tool server listening")
    hub = ToolHub((ServerConfig(name="web", url=url, protocol=rev),))
    await hub.start()
    assert hub.health()[0].state == "ready", hub.health()
    engine = engines(tools=hub)
    after, _ = await stop_during_slow_task(engine, record, upstream)
    assert after < engine.settings.limits.tool_grace


@pytest.mark.parametrize("rev", REVISIONS)
async def test_stop_during_a_call_over_stdio_the_servers_handler_saw_the_cancel(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path, rev: str
) -> None:
    record = tmp_path / "record.jsonl"
    hub = ToolHub((demo_server_config(record, protocol=rev),), log_dir=tmp_path / "logs")
    await hub.start()
    engine = engines(tools=hub)
    after, _ = await stop_during_slow_task(engine, record, upstream)
    assert after < engine.settings.limits.tool_grace


@pytest.mark.parametrize("rev", REVISIONS)
async def test_a_question_over_streamable_http_is_asked_and_its_answer_reaches_the_tool(
    engines: EngineFactory, upstream: ScriptedUpstream, http_server: tuple[str, Path], rev: str
) -> None:
    url, record = http_server
    await wait_until(partial(port_open, int(url.split(":")[2].split("/")[0])), 20, "the HTTP tool server listening")
    hub = ToolHub((ServerConfig(name="web", url=url, protocol=rev),))
    await hub.start()
    engine = engines(tools=hub)
    cid = engine.create_conversation()
    upstream.plan(
        Behavior(text="", tool_calls=[PlannedCall("place_order", '{"item": "cup"}', "call_h")]), Behavior(text="ok")
    )
    await engine.submit(cid, "order a cup")
    asked = await wait_until(lambda: [e for e in engine.events(cid) if isinstance(e, QuestionAsked)], 20, "a question")
    assert asked[0].revision == rev
    run = engine.active_run(cid)
    assert run is not None and questions.answer_question(run, asked[0].question_id, "decline")
    await wait_until(lambda: not engine.is_streaming(cid), 20, "the turn to end")
    (result,) = [e for e in engine.events(cid) if isinstance(e, ToolResult)]
    assert result.content == "No order placed: the person chose decline."
    assert [(r["action"], r["revision"]) for r in server_record(record)] == [("decline", rev)]
