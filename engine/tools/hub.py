"""The tool hub: the configured MCP servers, their tools as the model sees them, their health, and calls.

Guarantees:
- Only servers in the configuration are started; a server that fails to start or dies gives a readable
  ``ServerHealth`` message and its tools leave the tool set (the model is not offered them), never a crash.
- A server that dies (during a call, or while idle, noticed at the next call) is started again in the background
  with backoff, at most ``max_restarts`` times in a row (a successful call resets the count).
- Tool names are unique as the model sees them and valid for every provider (``[A-Za-z0-9_-]{1,64}``): a name
  two servers share is offered as ``server_tool``; a name a provider would refuse is rewritten.
- ``call`` raises only ``ToolServerError`` subclasses; cancelling the calling task tells the server to cancel.
- A tool a server lists but the model cannot be offered (``execution.taskSupport`` ``required``) is in its
  ``ServerHealth.withheld`` with the reason, never in the tool set.
- The binary parts of every result go to ``blobs`` (one ``MemoryBlobs`` of the hub's own when none is given).
- Every offered tool carries what its approval policy reads (``engine.tools.approval``): its server's modes, its
  annotations and its grant hash; server grants are in ``grants`` (a ``MemoryGrants`` of its own when none given).
- Each ready server's ``ServerHealth.described`` holds every tool's description exactly as the model receives it,
  with its grant hash (``describe``): what the Tools panel and an approval card show a person.
- A conversation may have tool servers of its own over these (``chats``, ``engine.tools.chat_hub``): its turns
  use ``of_chat(cid)``; ``stop`` stops them too.
- ``watch`` (``engine.tools.resource_watch``) holds which resources its servers said changed: every connection's
  ``resources/updated`` marks it, and a restarted server is asked again about the URIs watched on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from engine.tools.approval import Grants, Policy, resolve, tool_hash
from engine.tools.config import ServerConfig
from engine.tools.elicitation import Ask
from engine.tools.mcp_server import (
    CallOutcome,
    MCPConnection,
    Progress,
    ServerGone,
    ServerUnavailable,
    ToolSpec,
    Withheld,
)
from engine.tools.names import parameters, safe_name
from engine.tools.resource_watch import ResourceWatch
from engine.tools.result_content import Retouch
from engine.tools.server_note import ServerNote
from ledger.events import ApprovalMode
from store.blobs import BlobStore, MemoryBlobs
from store.grants import GrantStore, MemoryGrants

log = logging.getLogger("ledger_chat.tools")
NO_GRANT = Grants(current="")
HealthState = Literal["starting", "ready", "failed", "restarting", "stopped"]


@dataclass(frozen=True, slots=True)
class ServerHealth:
    name: str
    state: HealthState
    tools: tuple[str, ...] = ()
    message: str | None = None
    confirm: bool = False
    withheld: tuple[Withheld, ...] = ()  # tools it lists that are not offered to the model, with the reason
    modes: tuple[tuple[str, ApprovalMode], ...] = ()  # each tool's approval mode before any grant
    described: tuple[ToolDescribed, ...] = ()  # each tool's description as the model receives it, and its hash


@dataclass(frozen=True, slots=True)
class ToolDescribed:
    """A tool's description exactly as its server lists it (and the model receives it), with its grant hash."""

    name: str
    description: str
    grant_hash: str  # ``engine.tools.approval.tool_hash``: a grant bound to another hash is void


@dataclass(frozen=True, slots=True)
class ResolvedTool:
    """Where a tool name the model used leads."""

    server: str
    tool: str
    confirm: bool
    grant_hash: str = ""  # ``engine.tools.approval.tool_hash`` of the tool as its server lists it now
    annotations: Mapping[str, Any] = field(default_factory=dict)
    modes: Mapping[str, ApprovalMode] = field(default_factory=dict)  # its server's approval table

    def policy(self, preset: Mapping[str, ApprovalMode] | None, grants: Grants) -> Policy:
        return resolve(self.tool, self.annotations, self.modes, preset, grants)


class ToolHub:
    def __init__(
        self,
        servers: tuple[ServerConfig, ...],
        *,
        log_dir: Path | None = None,
        max_restarts: int = 3,
        blobs: BlobStore | None = None,
        grants: GrantStore | None = None,
    ) -> None:
        self.configs = {s.name: s for s in servers}
        self.log_dir = log_dir
        self.blobs: BlobStore = blobs if blobs is not None else MemoryBlobs()
        self.max_restarts = max_restarts
        self.grants: GrantStore = grants if grants is not None else MemoryGrants()
        self._connections: dict[str, MCPConnection] = {}
        self._health: dict[str, ServerHealth] = {
            s.name: ServerHealth(name=s.name, state="starting", confirm=s.confirm) for s in servers
        }
        self._restarts: dict[str, int] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._exposed: dict[str, ResolvedTool] = {}
        self._specs: dict[str, ToolSpec] = {}
        self._settled = asyncio.Event()
        self.chats: dict[str, ToolHub] = {}  # conversation id -> its own servers over these (``ChatHub``)
        self.retouch: Retouch | None = None  # re-encodes result images (the app's ``engine.files`` gives it)
        self.watch = ResourceWatch()  # resources its servers said changed (``engine.tools.resource_watch``)

    async def start(self) -> None:
        """Start every configured server at once; returns when each is ready or has failed."""
        try:
            await asyncio.gather(*(self._start(name) for name in self.configs))
        finally:
            self._settled.set()

    async def settled(self, timeout: float) -> bool:
        """Wait (at most ``timeout`` seconds) until ``start`` has finished; whether it has."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._settled.wait(), timeout)
        return self._settled.is_set()

    def schemas(self) -> list[dict[str, Any]]:
        """The tools the model is offered now, in litellm's (OpenAI's) ``tools=`` shape."""
        return [
            {
                "type": "function",
                "function": {"name": name, "description": spec.description, "parameters": parameters(spec.schema)},
            }
            for name, spec in self._specs.items()
        ]

    def resolve(self, name: str) -> ResolvedTool | None:
        return self._exposed.get(name)

    def of_chat(self, cid: str) -> ToolHub:
        """The hub a turn in conversation ``cid`` uses: its own servers over these, or these alone."""
        return self.chats.get(cid, self)

    def remote_notes(self) -> Mapping[str, ServerNote]:
        """The remote servers a turn may use, by name, on or off (``engine.tools.remote_hub``): none here."""
        return {}

    def withheld_reason(self, name: str) -> str | None:
        """Why a tool of that name, listed by a server, is not offered (None when no server withholds one)."""
        for health in self._health.values():
            for tool in health.withheld:
                if tool.name == name:
                    return tool.reason
        return None

    def health(self) -> tuple[ServerHealth, ...]:
        return tuple(self._health.values())

    def session(self, server: str) -> Any:
        """The SDK session of ``server`` (prompts, resources: ``engine.tools.prompts``), or None when not running."""
        connection = self._connections.get(server)
        return connection.session if connection is not None and connection.alive else None

    def describe(self, server: str, tool: str) -> ToolDescribed | None:
        """The tool's description as its server lists it now (None: not listed, or the server is not ready)."""
        health = self._health.get(server)
        return next((d for d in health.described if d.name == tool), None) if health is not None else None

    async def call(
        self, server: str, tool: str, arguments: dict[str, Any], progress: Progress | None, ask: Ask | None = None
    ) -> CallOutcome:
        connection = self._connections.get(server)
        if connection is None or not connection.alive:
            if connection is not None:
                self._died(server, "it had stopped", connection)  # died while idle: start it again for next time
            raise ServerUnavailable(f"the tool server {server!r} is not running")
        try:
            outcome = await connection.call(tool, arguments, progress, ask)
        except ServerGone:
            self._died(server, "it stopped while running a call", connection)
            raise
        self._restarts[server] = 0  # healthy again: a later crash gets its full set of restarts
        return outcome

    async def stop(self) -> None:
        chats, self.chats = list(self.chats.values()), {}
        await asyncio.gather(*(chat.stop() for chat in chats), return_exceptions=True)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.watch.close()
        await asyncio.gather(*(c.stop() for c in self._connections.values()), return_exceptions=True)
        for name in self._health:
            self._set(name, "stopped", message="stopped with the app")

    # --- internals ---------------------------------------------------------------------------------------------

    async def _start(self, name: str) -> None:
        connection = MCPConnection(self.configs[name], self.log_dir, self.blobs)
        connection.retouch = self.retouch
        connection.updated = lambda uri: self.watch.mark(name, uri)
        try:
            await connection.start()
        except ServerUnavailable as exc:
            log.warning("tool server %s could not start: %s", name, exc)
            self._set(name, "failed", message=f"could not start: {exc}")
            return
        self._connections[name] = connection
        self.watch.spawn(self.watch.resume(name, connection.session))
        modes = tuple(
            (t.name, resolve(t.name, t.annotations, self.configs[name].modes, None, NO_GRANT).mode)
            for t in connection.tools
        )
        described = tuple(
            ToolDescribed(t.name, t.description, tool_hash(t.name, t.description, t.schema)) for t in connection.tools
        )
        self._set(
            name,
            "ready",
            tools=tuple(t.name for t in connection.tools),
            withheld=connection.withheld,
            modes=modes,
            described=described,
        )
        self._expose()

    def _died(self, name: str, why: str, connection: MCPConnection) -> None:
        if self._health[name].state != "ready" or self._connections.get(name) is not connection:
            return  # a late failure of an older connection never touches the current one
        count = self._restarts.get(name, 0)
        self._connections.pop(name, None)
        self._expose()
        self._spawn(connection.stop())
        if count >= self.max_restarts:
            self._set(name, "failed", message=f"{why}; gave up after {count} restarts")
            return
        self._restarts[name] = count + 1
        self._set(name, "restarting", message=f"{why}; starting it again")
        self._spawn(self._restart(name, why))

    async def _restart(self, name: str, why: str) -> None:
        """Start the server again with backoff, until it is ready or the restarts run out."""
        while True:
            await asyncio.sleep(0.5 * 2 ** (self._restarts[name] - 1))
            await self._start(name)
            if self._health[name].state == "ready" or self._restarts[name] >= self.max_restarts:
                return
            self._restarts[name] += 1
            self._set(name, "restarting", message=f"{why}; starting it again")

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _expose(self) -> None:
        counts: dict[str, int] = dict.fromkeys(self._taken(), 1)  # a name taken elsewhere: ``server_tool``
        for connection in self._connections.values():
            for spec in connection.tools:
                counts[spec.name] = counts.get(spec.name, 0) + 1
        exposed: dict[str, ResolvedTool] = {}
        specs: dict[str, ToolSpec] = {}
        for server, connection in self._connections.items():
            for spec in connection.tools:
                name = safe_name(spec.name if counts[spec.name] == 1 else f"{server}_{spec.name}", exposed)
                config = self.configs[server]
                grant_hash = tool_hash(spec.name, spec.description, spec.schema)
                exposed[name] = ResolvedTool(
                    server, spec.name, config.confirm, grant_hash, spec.annotations, config.modes
                )
                specs[name] = spec
        self._exposed, self._specs = exposed, specs

    def _taken(self) -> set[str]:
        """Tool names offered beside this hub's (none; a chat's hub: the app's, ``engine.tools.chat_hub``)."""
        return set()

    def _set(
        self,
        name: str,
        state: HealthState,
        *,
        tools: tuple[str, ...] = (),
        message: str | None = None,
        withheld: tuple[Withheld, ...] = (),
        modes: tuple[tuple[str, ApprovalMode], ...] = (),
        described: tuple[ToolDescribed, ...] = (),
    ) -> None:
        confirm = self.configs[name].confirm
        self._health[name] = ServerHealth(name, state, tools, message, confirm, withheld, modes, described)
