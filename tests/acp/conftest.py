"""The editor bridge's set-up: ``main.py acp`` as a real subprocess, driven over real stdio by the SDK's client side
(``acp.stdio.spawn_agent_process``), its model the session's scripted upstream reached through litellm, its tools
the demo tool server (stdio MCP) from an ``mcp.json``.

``Editor`` is the client: it keeps every ``session/update`` per session, every raw message the agent wrote (in the
order it wrote them, to check that the last chunk precedes a prompt's answer), and answers
``session/request_permission`` with the option the test chose (``permission``) and a tool's question
(``elicitation/create``, asked only of an editor that declares form elicitation) with ``answer`` (None: declined).
``agent`` is one process for the module (each test its own session); ``start_agent`` starts more (a restart, a
client that goes away, one beside the web app on PostgreSQL). Tests that drive Chromium are marked ``browser``.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from acp import text_block
from acp.schema import (
    AcceptElicitationResponse,
    AllowedOutcome,
    ClientCapabilities,
    DeclineElicitationResponse,
    DeniedOutcome,
    RequestPermissionResponse,
)
from acp.stdio import spawn_agent_process

from ledger.errors import UnknownConversationError
from ledger.events.core import AnyEvent, Persisted
from ledger.presets import Preset
from store.presets import FilePresets
from store.tinydb.store import Store
from tests.support.app_process import FAKE_KEY, ROOT
from tests.support.chromium import mark_as_browser_tests
from tests.support.tools import demo_tools_options
from tests.support.upstream import ScriptedUpstream
from tests.support.waiting import wait_until

HERE = Path(__file__).parent


@pytest.hookimpl(tryfirst=True)  # before ``-m`` selects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests that drive Chromium are marked ``browser`` (and skipped, saying why, where it is missing)."""
    here = [item for item in items if item.path.is_relative_to(HERE)]
    mark_as_browser_tests(item for item in here if "browser" in getattr(item, "fixturenames", ()))


class Editor:
    """The client side of one agent process."""

    def __init__(self) -> None:
        self.updates: dict[str, list[Any]] = {}
        self.wire: list[dict[str, Any]] = []  # every message the agent wrote, in order
        self.permission: str | None = "allow_once"  # the option chosen; None: answered "cancelled"
        self.hold = asyncio.Event()  # with ``permission`` "hold": answered "cancelled" once this is set
        self.asked: list[Any] = []  # the permission requests, in order
        self.questions: list[Any] = []  # the tools' questions (``elicitation/create``): (message, mode), in order
        self.answer: dict[str, Any] | None = None  # the values a question is answered with; None: declined
        self.conn: Any = None
        self.process: Any = None
        self.data_dir = Path()
        self.record = Path()  # what the demo tool server's handlers saw (``tests.support.tools.server_record``)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.setdefault(session_id, []).append(update)

    async def request_permission(self, session_id: str, tool_call: Any, options: Any, **kwargs: Any) -> Any:
        self.asked.append((session_id, tool_call, [o.option_id for o in options]))
        if self.permission == "hold":  # an editor shows the question until its Stop: then it answers cancelled
            await self.hold.wait()
        if self.permission in (None, "hold"):
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(option_id=self.permission, outcome="selected"))

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        self.questions.append((message, mode))
        if self.answer is None:
            return DeclineElicitationResponse(action="decline")
        return AcceptElicitationResponse(action="accept", content=self.answer)

    def observe(self, event: Any) -> None:
        if event.direction.value == "incoming":
            self.wire.append(event.message)

    def text(self, session_id: str, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.updates.get(session_id, []) if u.session_update == kind)

    def of_kind(self, session_id: str, kind: str) -> list[Any]:
        return [u for u in self.updates.get(session_id, []) if u.session_update == kind]

    async def new_session(self) -> str:
        return str((await self.conn.new_session(cwd=str(ROOT), mcp_servers=[])).session_id)

    async def prompt(self, session_id: str, text: str) -> Any:
        return await self.conn.prompt(session_id=session_id, prompt=[text_block(text)])

    async def chunks_arrived(self, session_id: str, count: int) -> None:
        await wait_until(lambda: len(self.of_kind(session_id, "agent_message_chunk")) >= count, 30, "chunks")

    def write_raw(self, line: bytes) -> None:
        self.process.stdin.write(line)


@asynccontextmanager
async def start_agent(
    data_dir: Path, upstream: ScriptedUpstream, *extra: str, app_tools: bool = True
) -> AsyncIterator[Editor]:
    """``main.py acp`` on ``data_dir`` answering with ``upstream``, initialized; its log beside the folder
    (``app_tools``: the demo tool server is the app's)."""
    editor = Editor()
    args = ["--model", "openai/test-model", "--api-base", upstream.base_url, "--titles", "off"]
    args += ["--data-dir", str(data_dir), "--first-chunk-timeout", "20", *extra]
    tools = data_dir.parent / f"{data_dir.name}-tools"
    tools.mkdir(exist_ok=True)
    with open(data_dir.parent / f"{data_dir.name}-acp.log", "ab") as log:
        async with spawn_agent_process(
            editor,
            sys.executable,
            str(ROOT / "main.py"),
            "acp",
            *args,
            *(demo_tools_options(tools) if app_tools else ()),
            env={"OPENAI_API_KEY": FAKE_KEY, "PYTHONPATH": str(ROOT)},
            cwd=ROOT,
            transport_kwargs={"stderr": log, "shutdown_timeout": 20.0},
            observers=[editor.observe],
            use_unstable_protocol=True,  # ``elicitation/create`` is unstable in ACP v1 (an editor opts in)
        ) as (conn, process):
            editor.conn, editor.process, editor.data_dir = conn, process, data_dir
            editor.record = tools / "record.jsonl"
            await conn.initialize(protocol_version=1, client_capabilities=ClientCapabilities())
            yield editor


def ledger_events(data_dir: Path, cid: str) -> list[AnyEvent]:
    """The conversation's events as the files hold them so far (read-only: the agent may still run; none while its
    first batch is not written)."""
    store = Store.open(data_dir, read_only=True)
    try:
        return list(store.events(cid))
    except UnknownConversationError:
        return []
    finally:
        store.close()


async def persisted(editor: Editor, cid: str, count: int = 1) -> list[Persisted]:
    """The conversation's ``persisted`` events once the files hold ``count`` of them: a prompt is answered when its
    attempt ends, a moment before the writer has saved that end (on a busy machine, more than a moment)."""
    return await wait_until(
        lambda: (
            (found := [e for e in ledger_events(editor.data_dir, cid) if isinstance(e, Persisted)])[count - 1 :]
            and found
        ),
        30,
        f"{count} persisted answer(s) in the files",
    )


PIRATE = "You are Bonny. Answer like a pirate."  # the agent preset the module's agent has besides the default


@pytest.fixture
def scripted(upstream_server: ScriptedUpstream) -> ScriptedUpstream:
    """The session's scripted upstream, nothing planned, no request recorded (litellm is the agent's, not ours)."""
    upstream_server.reset()
    return upstream_server


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def agent(tmp_path_factory: pytest.TempPathFactory, upstream_server: ScriptedUpstream) -> AsyncIterator[Editor]:
    """One agent process for the module's tests (each opens its own session)."""
    data_dir = tmp_path_factory.mktemp("acp") / "data"
    data_dir.mkdir()
    FilePresets(data_dir / "presets.json").add(Preset(preset_id="pirate", name="Pirate", instructions=PIRATE))
    async with start_agent(data_dir, upstream_server) as editor:
        yield editor
