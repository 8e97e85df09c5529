"""The app's tool hub with the remote servers people add (``engine.tools.remote``): a turn in a conversation uses the
configured servers (and the conversation's own, ``engine.tools.chat_hub``) and the remote servers its owner uses.

Guarantees:
- ``AppHub.of_chat(cid)`` is the hub the configured servers give that conversation when there are no remote servers
  (``--no-tools``); else a ``PersonHub`` over it for the conversation's owner (``owner_of``).
- A ``PersonHub`` reads the remote servers again as its turn starts (``settled``) when another instance changed them
  (``RemoteServers.fresh``: one look at the store's stamp), so a turn uses what the Tools panel of any instance
  shows; ``remote_notes`` are the owner's servers, on or off, as a turn records them (``engine.tools.server_note``).
- A ``PersonHub`` offers the hub's tools, then each enabled remote server's tools as it listed them last; a name
  another server's tool has is offered as ``server_tool`` (``engine.tools.hub``'s rule); a call goes to the
  server it was offered for, a remote one through that person's own connection and sign-in, with the tool's
  ``readOnlyHint`` (what decides whether a call refused after it was sent is sent again). Their approval is the
  tool's annotations' (``engine.tools.approval``): remote servers have no approval table of their own.
- ``AppHub.start`` reads the remote servers first, then looks at the store's stamp every ``FRESH_SECONDS`` (a
  Tools panel on this instance shows within that time what another instance changed); ``AppHub.stop`` stops that
  and their connections too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from typing import Any

from engine.tools.approval import tool_hash
from engine.tools.config import ServerConfig
from engine.tools.elicitation import Ask
from engine.tools.hub import ResolvedTool, ToolDescribed, ToolHub
from engine.tools.mcp_server import CallOutcome, Progress, ToolSpec
from engine.tools.names import parameters as tool_parameters
from engine.tools.names import safe_name
from engine.tools.remote import RemoteServers
from engine.tools.server_note import ServerNote, note_of
from ledger.errors import StoreError
from store.blobs import BlobStore
from store.grants import GrantStore

log = logging.getLogger("ledger_chat.remote")
FRESH_SECONDS = 1.0


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
        self._fresh: asyncio.Task[None] | None = None

    def of_chat(self, cid: str) -> ToolHub:
        base = super().of_chat(cid)
        if self.remote is None:
            return base
        return PersonHub(base, self.remote, self.owner_of(cid))

    async def start(self) -> None:
        if self.remote is not None:
            await self.remote.load()
            self._fresh = asyncio.get_running_loop().create_task(self._keep_fresh(self.remote))
        await super().start()

    async def stop(self) -> None:
        if self._fresh is not None:
            self._fresh.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._fresh
        if self.remote is not None:
            await self.remote.stop()
        await super().stop()

    async def _keep_fresh(self, remote: RemoteServers) -> None:
        while True:
            await asyncio.sleep(FRESH_SECONDS)
            try:
                await remote.fresh()
            except StoreError as exc:  # the database is away: the servers read last stay, looked at again next time
                log.debug("the remote servers could not be read again: %s", exc)


class PersonHub(ToolHub):
    """The tools of ``base`` and the remote servers ``person`` uses (see the module's guarantees)."""

    def __init__(self, base: ToolHub, remote: RemoteServers, person: str | None) -> None:
        super().__init__((), log_dir=base.log_dir, blobs=base.blobs, grants=base.grants)
        self.base, self.remote, self.person = base, remote, person
        self._build()

    def _build(self) -> None:
        base, remote, person = self.base, self.remote, self.person
        self._remote: dict[str, tuple[ResolvedTool, ToolSpec]] = {}
        self._described: dict[tuple[str, str], ToolDescribed] = {}
        self._notes = {s.name: note_of(s, remote.team) for s in remote.visible(person)}
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
        try:
            await self.remote.fresh()
        except StoreError as exc:  # the turn goes on with the servers read last
            log.warning("the remote tool servers could not be read again: %s", exc)
        settled = await self.base.settled(timeout)
        self._build()  # after the configured servers settled: their tool names come first
        return settled

    def remote_notes(self) -> Mapping[str, ServerNote]:
        return self._notes

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
