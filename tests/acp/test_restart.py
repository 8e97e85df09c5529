"""An editor that goes away mid-turn, and one that comes back: the first ``main.py acp`` loses its stdin while an
answer streams (the turn ends interrupted through the one cancel path, source ``acp``, and the process exits
cleanly); a second process on the same folder loads the session and replays the ledger's text; a third one, while
the second holds the folder, refuses in one line with exit code 2."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio

from ledger.events.core import Cancelled, CancelRequested, Persisted
from tests.acp.conftest import Editor, ledger_events, start_agent
from tests.support.app_process import ROOT
from tests.support.upstream import Behavior, ScriptedUpstream

pytestmark = pytest.mark.asyncio(loop_scope="module")
LONG = " ".join(f"piece{i}" for i in range(400))


@dataclass
class Restarted:
    data_dir: Path
    sid: str
    first: Editor  # the editor that went away
    exit_code: int | None
    second: Editor  # the one that loaded the session (still running)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def restarted(
    tmp_path_factory: pytest.TempPathFactory, upstream_server: ScriptedUpstream
) -> AsyncIterator[Restarted]:
    upstream_server.reset()
    data_dir = tmp_path_factory.mktemp("restart") / "data"
    async with start_agent(data_dir, upstream_server) as first:
        sid = await first.new_session()
        upstream_server.plan(Behavior(text="The first answer, whole."), Behavior(text=LONG, chunk_delay=0.05))
        assert (await first.prompt(sid, "the first question")).stop_reason == "end_turn"
        streaming = asyncio.ensure_future(first.prompt(sid, "the second question"))
        await first.chunks_arrived(sid, 8)
        first.process.stdin.close()  # the editor goes away mid-turn
        exit_code = await asyncio.wait_for(first.process.wait(), 60)
        with contextlib.suppress(Exception):
            await streaming
    async with start_agent(data_dir, upstream_server) as second:
        await second.conn.load_session(cwd=str(ROOT), session_id=sid, mcp_servers=[])
        yield Restarted(data_dir, sid, first, exit_code, second)


async def test_a_client_that_closes_stdin_mid_turn_ends_the_turn_interrupted_and_the_process_exits_cleanly(
    restarted: Restarted,
) -> None:
    assert restarted.exit_code == 0
    events = ledger_events(restarted.data_dir, restarted.sid)
    assert [e.source for e in events if isinstance(e, (CancelRequested, Cancelled))] == ["acp", "acp"]
    first, second = [e for e in events if isinstance(e, Persisted)]
    assert (first.status, second.status) == ("complete", "interrupted")
    received = restarted.first.text(restarted.sid)
    assert received.startswith(first.text) and second.text.startswith(received[len(first.text) :])
    assert 0 < len(second.text) < len(LONG)


async def test_session_load_in_a_new_process_replays_the_same_text_the_ledger_keeps(restarted: Restarted) -> None:
    sid, loaded = restarted.sid, restarted.second
    first, second = [e for e in ledger_events(restarted.data_dir, sid) if isinstance(e, Persisted)]
    users = [u.content.text for u in loaded.of_kind(sid, "user_message_chunk")]
    assert users == ["the first question", "the second question"]
    assert loaded.text(sid) == first.text + second.text
    assert restarted.first.text(sid).startswith(first.text + second.text[:1]), "what was streamed, replayed"


async def test_a_tinydb_folder_in_use_is_refused_in_one_line_with_exit_code_2(restarted: Restarted) -> None:
    refused = subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "acp", "--data-dir", str(restarted.data_dir)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert refused.returncode == 2
    assert refused.stdout == "", "stdout is the protocol's alone"
    [line] = refused.stderr.strip().splitlines()
    assert "in use by another Ledger Chat" in line and "--database-url" in line
