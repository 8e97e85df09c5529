"""The app's tool hub with the remote servers people add (``engine.tools.remote``): a turn in a conversation uses the
configured servers (and the conversation's own, ``engine.tools.chat_hub``) and the remote servers its owner uses.

Guarantees:
- ``AppHub.of_chat(cid)`` is the hub the configured servers give that conversation when its owner (``owner_of``)
  uses no enabled remote server with known tools; else a ``PersonHub`` over it.
- A ``PersonHub`` offers the hub's tools, then each enabled remote server's tools as it listed them last; a name
  another server's tool has is offered as ``server_tool`` (``engine.tools.hub``'s rule); a call goes to the
  server it was offered for, a remote one through that person's own connection and sign-in, with the tool's
  ``readOnlyHint`` (what decides whether a call refused after it was sent is sent again). Their approval is the
  tool's annotations' (``engine.tools.approval``): remote servers have no approval table of their own.
- ``AppHub.start`` reads the remote servers first; ``AppHub.stop`` stops their connections too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.tools.approval import tool_hash
from engine.tools.config import ServerConfig
from engine.tools.elicitation import Ask
from engine.tools.hub import ResolvedTool, ToolDescribed, ToolHub
from engine.tools.mcp_server import CallOutcome, Progress, ToolSpec
from engine.tools.names import parameters as tool_parameters
from engine.tools.names import safe_name
from engine.tools.remote import RemoteServers
from store.blobs import BlobStore
from store.grants import GrantStore


class AppHub(ToolHub):
    def __init__(
        self,
        servers: tuple[ServerConfig, ...],
        remote: RemoteServers | None,
        *,
        log_dir: Any = None,
        blobs: BlobStore | None = None,
        grants: GrantStore | None = None,
    ) -> None:
        super().__init__(servers, log_dir=log_dir, blobs=blobs, grants=grants)
        self.remote = remote
        self.owner_of: Callable[[str], str | None] = lambda cid: None

    def of_chat(self, cid: str) -> ToolHub:
        base = super().of_chat(cid)
        if self.remote is None:
            return base
        person = self.owner_of(cid)
        used = [s for s in self.remote.visible(person) if s.enabled and self.remote.tools_of(s)]
        return PersonHub(base, self.remote, person) if used else base

    async def start(self) -> None:
        if self.remote is not None:
            await self.remote.load()
        await super().start()

    async def stop(self) -> None:
        if self.remote is not None:
            await self.remote.stop()
        await super().stop()


class PersonHub(ToolHub):
    """The tools of ``base`` and the remote servers ``person`` uses (see the module's guarantees)."""

    def __init__(self, base: ToolHub, remote: RemoteServers, person: str | None) -> None:
        super().__init__((), log_dir=base.log_dir, blobs=base.blobs, grants=base.grants)
        self.base, self.remote, self.person = base, remote, person
        self._remote: dict[str, tuple[ResolvedTool, ToolSpec]] = {}
        self._described: dict[tuple[str, str], ToolDescribed] = {}
        taken: dict[str, ResolvedTool] = {}
        for schema in base.schemas():
            name = str(schema["function"]["name"])
            resolved = base.resolve(name)
            if resolved is not None:
                taken[name] = resolved
        for server in remote.visible(person):
            if not server.enabled:
                continue
            for spec in remote.tools_of(server):
                wanted = spec.name if spec.name not in taken else f"{server.name}_{spec.name}"
                name = safe_name(wanted, taken)
                digest = tool_hash(spec.name, spec.description, spec.schema)
                resolved = ResolvedTool(server.name, spec.name, False, digest, spec.annotations, {})
                taken[name] = resolved
                self._remote[name] = (resolved, spec)
                self._described[(server.name, spec.name)] = ToolDescribed(spec.name, spec.description, digest)

    async def settled(self, timeout: float) -> bool:
        return await self.base.settled(timeout)

    def schemas(self) -> list[dict[str, Any]]:
        return self.base.schemas() + [
            {
                "type": "function",
                "function": {"name": name, "description": spec.description, "parameters": tool_parameters(spec.schema)},
            }
            for name, (_, spec) in self._remote.items()
        ]

    def resolve(self, name: str) -> ResolvedTool | None:
        found = self._remote.get(name)
        return found[0] if found is not None else self.base.resolve(name)

    def withheld_reason(self, name: str) -> str | None:
        return self.base.withheld_reason(name)

    def describe(self, server: str, tool: str) -> ToolDescribed | None:
        return self._described.get((server, tool)) or self.base.describe(server, tool)

    async def call(
        self, server: str, tool: str, arguments: dict[str, Any], progress: Progress | None, ask: Ask | None = None
    ) -> CallOutcome:
        remote = next((r for r, _ in self._remote.values() if r.server == server and r.tool == tool), None)
        if remote is None:
            return await self.base.call(server, tool, arguments, progress, ask)
        read_only = remote.annotations.get("readOnlyHint") is True
        return await self.remote.call(self.person, server, tool, arguments, progress, ask, read_only=read_only)
