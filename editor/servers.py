"""The MCP servers an editor names in ``session/new`` and ``session/load``: that session's own tool servers.

Guarantees:
- ``server_configs`` turns the protocol's ``mcpServers`` into the app's ``engine.tools.ServerConfig``: a stdio
  server runs its command with its arguments and environment in the session's ``cwd`` (when that folder exists);
  an HTTP server (``mcpCapabilities.http``: the app's MCP client speaks streamable HTTP) is reached at its URL with
  its headers. Names are kept apart from the app's servers and each other (``engine.tools.chat_hub.own_name``).
  SSE and ACP-transport servers, which this agent does not declare, are refused (invalid params) before anything
  starts. With ``--no-tools`` none is started (a warning on stderr names them) and the session works without them.
  Environment values and headers never reach the log or the ledger (``ServerConfig`` hides them).
- ``configs_of`` checks them; ``start`` hands them to the engine's tool hub for that conversation alone
  (``engine.tools.attach``, started in the background: a turn waits for them as for the app's); ``stop`` stops
  them. Starting again (a second ``session/load``) stops the ones started before.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

from acp import RequestError
from acp.schema import HttpMcpServer, McpServerStdio

from engine.commands import Engine
from engine.tools import ServerConfig, attach, detach, own_name

log = logging.getLogger("ledger_chat.editor")


def server_configs(servers: Sequence[Any], cwd: str, taken: set[str]) -> tuple[ServerConfig, ...]:
    """The app's configuration of an editor's ``mcpServers`` (names apart from ``taken``, which grows)."""
    out: list[ServerConfig] = []
    folder = cwd if os.path.isdir(cwd) else None
    for server in servers:
        name = own_name(server.name, taken)
        taken.add(name)
        if isinstance(server, McpServerStdio):
            env = {v.name: v.value for v in server.env}
            out.append(ServerConfig(name=name, command=server.command, args=tuple(server.args), env=env, cwd=folder))
        elif isinstance(server, HttpMcpServer):
            headers = {h.name: h.value for h in server.headers}
            out.append(ServerConfig(name=name, url=server.url, headers=headers))
        else:
            kind = getattr(server, "type", type(server).__name__)
            raise RequestError.invalid_params(
                {"details": f"the MCP server {server.name!r} uses {kind}: this agent takes stdio and http servers"}
            )
    return tuple(out)


def configs_of(engine: Engine, servers: Sequence[Any] | None, cwd: str) -> tuple[ServerConfig, ...]:
    """The configuration of a session's ``mcpServers`` (checked before anything starts)."""
    if engine.tools is None:  # ``--no-tools``: no tool server runs, the editor's neither; the session works
        if servers:
            log.warning("started with --no-tools: the editor's MCP servers %s are not started", _names(servers))
        return ()
    return server_configs(servers or (), cwd, set(engine.tools.configs) if engine.tools is not None else set())


def _names(servers: Sequence[Any]) -> str:
    return ", ".join(repr(getattr(server, "name", "?")) for server in servers)


async def start(engine: Engine, cid: str, configs: tuple[ServerConfig, ...]) -> None:
    """Conversation ``cid``'s own tool servers from now on (none: the app's alone), the ones before stopped."""
    await stop(engine, cid)
    if configs and engine.tools is not None:
        attach(engine.tools, cid, configs)
        log.info("session %s: starting the editor's MCP servers %s", cid, ", ".join(c.name for c in configs))


async def stop(engine: Engine, cid: str) -> None:
    """Stop conversation ``cid``'s own tool servers (if it has any)."""
    if engine.tools is not None:
        await detach(engine.tools, cid)
