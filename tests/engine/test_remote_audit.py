"""A remote tool server in a chat's own ledger: switching a server on or off and removing it writes nothing to any
chat, but the chat where it first runs a tool records what it is (``tool_server_used``, before the call's dispatch)
and, once it is switched off or removed, the next turn records that (``tool_server_gone``); the audit says both in
words; no secret of the server's address reaches the ledger; a replay of the export is the live state. Against
the demo tool server over real streamable HTTP."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from engine.commands.engine import Engine
from engine.tools import AppHub, Changer, RemoteServers
from ledger.codec import from_dict, to_dict, to_jsonl
from ledger.events import AnyEvent, ToolDispatched, ToolServerGone, ToolServerUsed
from ledger.folds.audit import audit
from ledger.reducer import replay
from tests.support.engine import EngineFactory, finished
from tests.support.mcp_http import serve_http
from tests.support.remote import team_servers
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream
from ui.audit_words import phase_detail, phase_label

ROOT_ADMIN, ADA = Changer("local:root", True, True), Changer("local:ada", True)
SECRET, PASSWORD = "s3cret-query-token", "pa55word"


@pytest.fixture(scope="module")
def demo_url() -> Iterator[str]:
    """The demo tool server over streamable HTTP (its address as a person may paste it: a user, a password and a
    token in the query, none of which the ledger may keep)."""
    server = serve_http("demo.tools_server")
    try:
        yield next(server).replace("http://", f"http://ann:{PASSWORD}@") + f"?key={SECRET}"
    finally:
        server.close()


@pytest.fixture
async def remote() -> AsyncIterator[RemoteServers]:
    servers = team_servers()
    yield servers
    await servers.stop()


@pytest.fixture
async def hub(remote: RemoteServers) -> AppHub:
    """The app's hub over the team's remote servers, its chats all Ada's (the engine it is given to stops it)."""
    made = AppHub((), remote)
    made.owner_of = lambda cid: ADA.person
    await made.start()
    return made


async def turn(engine: Engine, cid: str, upstream: ScriptedUpstream, *behaviors: Behavior) -> None:
    upstream.plan(*behaviors)
    await engine.submit(cid, "go on")
    await finished(engine, cid)


def calling(call_id: str) -> tuple[Behavior, Behavior]:
    return Behavior(text="", tool_calls=[PlannedCall("calculator", '{"expression": "2+3"}', call_id)]), Behavior(
        text="5."
    )


def servers_of(events: list[AnyEvent]) -> list[AnyEvent]:
    return [e for e in events if isinstance(e, ToolServerUsed | ToolServerGone)]


def audit_lines(engine: Engine, cid: str) -> list[str]:
    return [
        f"{phase_label(p)}: {phase_detail(p)}"
        for a in audit(engine.events(cid))
        for p in a.phases
        if p.kind.startswith("tool_server")
    ]


async def test_a_team_server_is_recorded_where_it_first_runs_a_tool_and_again_once_switched_off_and_removed(
    engines: EngineFactory, upstream: ScriptedUpstream, remote: RemoteServers, hub: AppHub, demo_url: str
) -> None:
    engine = engines(tools=hub)
    added = await remote.add(ROOT_ADMIN, "docs", demo_url, team_server=True)
    await remote.connect(ADA.person, "docs", None)  # its tools are listed: a turn offers them
    cid = engine.create_conversation()
    assert servers_of(engine.events(cid)) == []  # adding it wrote nothing to any chat

    await turn(engine, cid, upstream, *calling("call_1"))
    events = engine.events(cid)
    (used,) = servers_of(events)
    assert isinstance(used, ToolServerUsed)
    dispatched = next(e for e in events if isinstance(e, ToolDispatched) and e.call_id == "call_1")
    assert used.seq == dispatched.seq - 1 and used.call_id == "call_1"  # just before the call's dispatch
    url = demo_url.split("@")[1].split("?")[0]
    assert (used.server, used.url, used.team, used.added_by, used.added_ts) == (
        "docs", f"http://{url}", True, "local:root", added.added_ts,
    )  # fmt: skip
    when = f"{added.added_ts[:10]} {added.added_ts[11:16]} UTC"
    assert audit_lines(engine, cid) == [
        f"tool server: Tool server 'docs' (http://{url}), a team server, added by root on {when}, first used here"
    ]

    await turn(engine, cid, upstream, *calling("call_2"))  # the same server again: nothing more to say
    assert len(servers_of(engine.events(cid))) == 1

    await remote.enable(ROOT_ADMIN, "docs", False)
    await turn(engine, cid, upstream, Behavior(text="No tools now."))
    await turn(engine, cid, upstream, Behavior(text="Still none."))  # said once
    off = servers_of(engine.events(cid))[1:]
    assert len(off) == 1 and isinstance(off[0], ToolServerGone) and off[0].why == "disabled"
    switched = remote.named(ADA.person, "docs")
    assert switched is not None and off[0].changed_by == "local:root" and off[0].changed_ts == switched.changed_ts
    assert "calculator" not in json.dumps(upstream.records[-1].raw.get("tools") or [])  # none of its tools offered
    off_at = f"{switched.changed_ts[:10]} {switched.changed_ts[11:16]} UTC"
    assert audit_lines(engine, cid)[-1] == (
        f"tool server gone: Tool server 'docs' (http://{url}) was switched off by root on {off_at}: "
        "its tools are no longer offered here"
    )

    await remote.enable(ROOT_ADMIN, "docs", True)
    await turn(engine, cid, upstream, *calling("call_3"))  # changed since: recorded again, switched on
    again = servers_of(engine.events(cid))[-1]
    assert isinstance(again, ToolServerUsed) and again.call_id == "call_3" and again.changed_by == "local:root"
    assert audit_lines(engine, cid)[-1].endswith(f"switched on by root on {off_at}, first used here")

    await remote.remove(ROOT_ADMIN, "docs")
    await turn(engine, cid, upstream, Behavior(text="Gone."))
    gone = servers_of(engine.events(cid))[-1]
    assert isinstance(gone, ToolServerGone) and gone.why == "removed"
    assert audit_lines(engine, cid)[-1] == (
        f"tool server gone: Tool server 'docs' (http://{url}) was removed from the Tools panel: "
        "its tools are no longer offered here"
    )
    ledger = "".join(to_jsonl(engine.events(cid)))
    assert SECRET not in ledger and PASSWORD not in ledger
    exported = [to_dict(e) for e in engine.events(cid)]
    assert replay(from_dict(d) for d in exported).conversations[cid] == engine.conversation(cid)


async def test_each_chat_records_the_server_once_where_it_first_runs_and_a_chat_that_never_used_it_nothing(
    engines: EngineFactory, upstream: ScriptedUpstream, remote: RemoteServers, hub: AppHub, demo_url: str
) -> None:
    engine = engines(tools=hub)
    await remote.add(ADA, "mine", demo_url)
    await remote.connect(ADA.person, "mine", None)
    first, second, idle = (engine.create_conversation() for _ in range(3))
    two = [PlannedCall("calculator", '{"expression": "1+1"}', "call_a"), PlannedCall("current_time", "{}", "call_t")]
    await turn(engine, first, upstream, Behavior(text="", tool_calls=two), Behavior(text="2, and the time."))
    assert [e.call_id for e in engine.events(first) if isinstance(e, ToolDispatched)] == ["call_a", "call_t"]
    await turn(engine, second, upstream, *calling("call_b"))
    await turn(engine, idle, upstream, Behavior(text="No tool needed."))
    for cid in (first, second):
        (used,) = servers_of(engine.events(cid))
        assert isinstance(used, ToolServerUsed) and not used.team and used.added_by == "local:ada"
        assert audit_lines(engine, cid)[0].startswith("tool server: Tool server 'mine' (")
        assert ", ada's own server, added by ada on " in audit_lines(engine, cid)[0]
    await remote.remove(ADA, "mine")
    await turn(engine, idle, upstream, Behavior(text="Still nothing."))
    assert servers_of(engine.events(idle)) == []  # it never used the server: nothing vanished from it


async def test_an_app_started_without_tools_records_no_server_of_a_chat_as_gone(
    engines: EngineFactory,
    upstream: ScriptedUpstream,
    remote: RemoteServers,
    hub: AppHub,
    demo_url: str,
    tmp_path: Path,
) -> None:
    engine = engines(tmp_path / "data", tools=hub)
    await remote.add(ADA, "mine", demo_url)
    await remote.connect(ADA.person, "mine", None)
    cid = engine.create_conversation()
    await turn(engine, cid, upstream, *calling("call_1"))
    await engine.shutdown()
    assert engine.store.close() == 0
    bare = engines(tmp_path / "data")  # --no-tools: the server is still in the Tools panel, only nothing is offered
    await turn(bare, cid, upstream, Behavior(text="No tools here."))
    assert [e.KIND for e in servers_of(bare.events(cid))] == ["tool_server_used"]
