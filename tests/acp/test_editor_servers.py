"""The MCP servers an editor brings in ``session/new``: started by ``main.py acp`` (an agent without tool servers of
its own) as that session's tool servers, offered to the model in that conversation alone, their calls shown to the
editor and kept in the ledger, and stopped when the editor goes away or the bridge is told to end (SIGTERM)
mid-call, the turn then ending interrupted through the one cancel path."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from acp import RequestError
from acp.schema import EnvVariable, HttpMcpServer, McpServerStdio, SseMcpServer

from ledger.events.core import Cancelled, CancelRequested, Persisted, ToolDispatched, ToolResult
from tests.acp.conftest import Editor, ledger_events, persisted, start_agent
from tests.support.app_process import ROOT, free_port
from tests.support.tools import server_record
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream
from tests.support.waiting import wait_until

pytestmark = pytest.mark.asyncio(loop_scope="module")


def demo_server(record: Path, name: str = "editor demo") -> McpServerStdio:
    """The demo tool server as an editor names it (stdio), writing what its handlers saw to ``record``."""
    env = [EnvVariable(name="LEDGERCHAT_DEMO_TOOL_RECORD", value=str(record))]
    return McpServerStdio(name=name, command=sys.executable, args=["-m", "demo.tools_server"], env=env)


def running(pid: int) -> bool:
    """Whether process ``pid`` exists and has not ended (a zombie has ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


async def session_with(editor: Editor, *servers: Any) -> str:
    return str((await editor.conn.new_session(cwd=str(ROOT), mcp_servers=list(servers))).session_id)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def bare(tmp_path_factory: pytest.TempPathFactory, upstream_server: ScriptedUpstream) -> AsyncIterator[Editor]:
    """One agent process without tool servers of the app's."""
    data_dir = tmp_path_factory.mktemp("bare") / "data"
    async with start_agent(data_dir, upstream_server, app_tools=False) as editor:
        yield editor


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The demo tool server over streamable HTTP, its own process (accepting connections); its URL, its record."""
    port, record = free_port(), tmp_path / "http-record.jsonl"
    env = {**os.environ, "LEDGERCHAT_DEMO_TOOL_RECORD": str(record)}
    command = [sys.executable, "-m", "demo.tools_server", "--http", str(port)]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield f"http://127.0.0.1:{port}/mcp", record
    finally:
        process.kill()
        process.wait(timeout=10)


async def listening(url: str) -> None:
    port = int(url.rsplit(":", 1)[1].split("/")[0])

    def accepts() -> bool:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            return False
        return True

    await wait_until(accepts, 30, "the HTTP tool server listening")


async def test_the_editors_stdio_server_is_offered_in_its_session_alone_and_its_call_reaches_editor_and_ledger(
    bare: Editor, scripted: ScriptedUpstream, tmp_path: Path
) -> None:
    answered = await bare.conn.initialize(protocol_version=1)
    assert answered.agent_capabilities.mcp_capabilities.http is True
    sid = await session_with(bare, demo_server(tmp_path / "record.jsonl"))
    call = PlannedCall("calculator", '{"expression": "6 * 7"}', "call_calc")
    scripted.plan(Behavior(text="Counting. ", tool_calls=[call]), Behavior(text="It is 42."))
    assert (await bare.prompt(sid, "what is six times seven?")).stop_reason == "end_turn"
    assert "calculator" in scripted.records[0].tools, "the model was offered the editor's server's tools"
    await persisted(bare, sid)
    events = ledger_events(bare.data_dir, sid)
    [result] = [e for e in events if isinstance(e, ToolResult)]
    assert (result.call_id, result.status, result.content) == ("call_calc", "ok", "6 * 7 = 42")
    assert [e.server for e in events if isinstance(e, ToolDispatched)] == ["editor_demo"]
    [announced] = bare.of_kind(sid, "tool_call")
    assert announced.tool_call_id == "call_calc" and announced.title == "calculator"
    last = bare.of_kind(sid, "tool_call_update")[-1]
    assert (last.status, last.content[0].content.text) == ("completed", "6 * 7 = 42")
    assert bare.text(sid) == "Counting. It is 42."
    other = await session_with(bare)
    scripted.plan(Behavior(text="No tools here."))
    assert (await bare.prompt(other, "any tools?")).stop_reason == "end_turn"
    assert scripted.last.tools == [], "another session is offered none of them"


async def test_the_editors_streamable_http_server_is_offered_too(
    bare: Editor, scripted: ScriptedUpstream, http_server: tuple[str, Path]
) -> None:
    url, _ = http_server
    await listening(url)
    sid = await session_with(bare, HttpMcpServer(name="web", url=url, headers=[], type="http"))
    scripted.plan(Behavior(text="", tool_calls=[PlannedCall("calculator", '{"expression": "2 + 3"}', "c")]))
    scripted.plan(Behavior(text="Five."))
    assert (await bare.prompt(sid, "two plus three?")).stop_reason == "end_turn"
    await persisted(bare, sid)
    [result] = [e for e in ledger_events(bare.data_dir, sid) if isinstance(e, ToolResult)]
    assert (result.status, result.content) == ("ok", "2 + 3 = 5")


async def test_an_sse_server_which_the_agent_does_not_declare_is_refused_and_no_session_is_made(
    bare: Editor, scripted: ScriptedUpstream
) -> None:
    sse = SseMcpServer(name="old", url="http://127.0.0.1:9/sse", headers=[], type="sse")
    with pytest.raises(RequestError) as refused:
        await bare.conn.new_session(cwd=str(ROOT), mcp_servers=[sse])
    assert refused.value.code == -32602 and "stdio and http" in refused.value.data["details"]


@pytest.mark.parametrize("how", ["the editor closes stdin", "SIGTERM"])
async def test_the_editor_going_away_mid_call_stops_its_server_and_the_turn_ends_interrupted(
    how: str, tmp_path: Path, scripted: ScriptedUpstream
) -> None:
    data_dir, record = tmp_path / "data", tmp_path / "record.jsonl"
    async with start_agent(data_dir, scripted, app_tools=False) as editor:
        sid = await session_with(editor, demo_server(record))
        call = PlannedCall("slow_task", '{"seconds": 30}', "call_slow")
        scripted.plan(Behavior(text="Working. ", tool_calls=[call]))
        prompt = asyncio.ensure_future(editor.prompt(sid, "run the slow task"))
        await wait_until(lambda: [r for r in server_record(record) if r["event"] == "slow_task_started"], 30, "call")
        [started] = [r for r in server_record(record) if r["event"] == "slow_task_started"]
        assert running(started["pid"])
        if how == "SIGTERM":
            editor.process.send_signal(signal.SIGTERM)
        else:
            editor.process.stdin.close()
        assert await asyncio.wait_for(editor.process.wait(), 60) == 0
        prompt.cancel()
        await asyncio.gather(prompt, return_exceptions=True)
    assert not running(started["pid"]), "the server the editor brought was stopped"
    assert "slow_task_cancelled" in [r["event"] for r in server_record(record)], "its call was cancelled first"
    events = ledger_events(data_dir, sid)
    assert [e.source for e in events if isinstance(e, (CancelRequested, Cancelled))] == ["acp", "acp"]
    [result] = [e for e in events if isinstance(e, ToolResult)]
    assert result.status == "cancelled"
    [answer] = [e for e in events if isinstance(e, Persisted)]
    assert (answer.status, answer.text) == ("interrupted", "Working. ")


async def test_with_no_tools_the_editors_servers_are_not_started_and_the_session_answers_without_tools(
    tmp_path: Path, scripted: ScriptedUpstream
) -> None:
    data_dir, record = tmp_path / "data", tmp_path / "record.jsonl"
    async with start_agent(data_dir, scripted, "--no-tools", app_tools=False) as editor:
        sid = await session_with(editor, demo_server(record))
        scripted.plan(Behavior(text="No tools here."))
        assert (await editor.prompt(sid, "any tools?")).stop_reason == "end_turn"
        assert scripted.last.tools == [], "the model was offered none: --no-tools holds for the editor's servers too"
        assert editor.text(sid) == "No tools here."
    assert not record.exists(), "the editor's server never ran"
    assert "not started" in (tmp_path / "data-acp.log").read_text()
