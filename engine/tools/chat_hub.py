"""A conversation's own tool servers over the app's: the MCP servers an editor's session brings (``editor``),
offered to the model in that conversation only.

Guarantees:
- A ``ChatHub`` is a ``ToolHub`` of the conversation's own servers (started, watched, restarted and stopped as any
  hub's, their binary results in the app's blobs, server grants in the app's grant store) over the app's hub
  (``base``): the model is offered the app's tools, then the conversation's; one of those whose name an app tool
  has is offered as ``server_tool`` (a name both offer is the app's: ``resolve`` asks the app's hub first).
- A call goes to the hub whose configuration names its server; ``own_name`` keeps the conversation's server names
  apart from the app's (and from each other), so a call never reaches the wrong server.
- ``attach`` puts the hub in ``base.chats`` (the engine's turns in that conversation take it: ``ToolHub.of_chat``)
  and starts its servers in the background; ``detach`` takes it out and stops them (also when the app's hub stops).
  Only servers given here are started: nothing the model says adds one.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Collection
from typing import Any

from engine.tools.config import ServerConfig
from engine.tools.elicitation import Ask
from engine.tools.hub import ResolvedTool, ToolDescribed, ToolHub
from engine.tools.mcp_server import CallOutcome, Progress


class ChatHub(ToolHub):
    """Conversation ``cid``'s own servers over ``base`` (the app's hub)."""

    def __init__(self, cid: str, servers: tuple[ServerConfig, ...], base: ToolHub) -> None:
        super().__init__(servers, log_dir=base.log_dir, blobs=base.blobs, grants=base.grants)
        self.cid, self.base = cid, base
        self.retouch = base.retouch
        self.starting: asyncio.Task[None] | None = None

    async def settled(self, timeout: float) -> bool:
        own, app = await asyncio.gather(super().settled(timeout), self.base.settled(timeout))
        return own and app

    def schemas(self) -> list[dict[str, Any]]:
        app = self.base.schemas()
        taken = {s["function"]["name"] for s in app}
        return app + [s for s in super().schemas() if s["function"]["name"] not in taken]

    def resolve(self, name: str) -> ResolvedTool | None:
        return self.base.resolve(name) or super().resolve(name)

    def withheld_reason(self, name: str) -> str | None:
        return self.base.withheld_reason(name) or super().withheld_reason(name)

    def describe(self, server: str, tool: str) -> ToolDescribed | None:
        return super().describe(server, tool) if server in self.configs else self.base.describe(server, tool)

    async def call(
        self, server: str, tool: str, arguments: dict[str, Any], progress: Progress | None, ask: Ask | None = None
    ) -> CallOutcome:
        if server in self.configs:
            return await super().call(server, tool, arguments, progress, ask)
        return await self.base.call(server, tool, arguments, progress, ask)

    def _taken(self) -> set[str]:
        return {s["function"]["name"] for s in self.base.schemas()}


def own_name(name: str, taken: Collection[str]) -> str:
    """A server name the configuration accepts (``[A-Za-z0-9_-]{1,40}``) that no name in ``taken`` has."""
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:32] or "server"
    candidate, n = safe, 2
    while candidate in taken:
        candidate, n = f"{safe}-{n}", n + 1
    return candidate


def attach(base: ToolHub, cid: str, servers: tuple[ServerConfig, ...]) -> ChatHub:
    """Conversation ``cid``'s servers, offered in its turns from now on and started in the background."""
    hub = ChatHub(cid, servers, base)
    base.chats[cid] = hub
    hub.starting = asyncio.get_running_loop().create_task(hub.start(), name=f"tool servers of {cid}")
    return hub


async def detach(base: ToolHub, cid: str) -> None:
    """Stop conversation ``cid``'s own servers; its turns use the app's alone again."""
    hub = base.chats.pop(cid, None)
    if hub is None:
        return
    if isinstance(hub, ChatHub) and hub.starting is not None:  # (a start ends ready or failed, within its timeout)
        await asyncio.gather(hub.starting, return_exceptions=True)
    await hub.stop()
