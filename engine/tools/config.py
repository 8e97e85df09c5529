"""The tool servers an operator allows: a JSON file in the usual ``mcpServers`` shape, and nothing else.

    {"mcpServers": {
        "files": {"command": "python", "args": ["-m", "my_server"], "env": {"ROOT": "/srv"}, "confirm": true},
        "web":   {"url": "http://127.0.0.1:9000/mcp", "headers": {"Authorization": "Bearer ..."},
                  "approval": {"*": "ask", "read_file": "run"}}}}

``approval`` sets the approval mode per tool or for all (``*``); a plain mode means ``{"*": mode}``; modes and
defaults: ``engine.tools.approval``. ``"confirm": true`` keeps meaning "ask every time" (``{"*": "ask"}``).

Guarantees: ``load_tool_config`` returns validated ``ServerConfig`` values or raises ``ToolConfigError`` with one
line naming the server and the field; only servers listed here are ever started (nothing the model or the page
says can add one); ``env`` and ``headers`` values are never written to the ledger, logs or page (their
``repr`` hides them).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.tools.approval import parse_modes
from ledger.events import ApprovalMode

NAME = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
PROTOCOLS = ("auto", "2025-11-25", "2026-07-28")  # ``protocol``: which MCP revision to speak (auto: the newest offered)


class ToolConfigError(ValueError):
    """The tools configuration is invalid; the message is one line naming the server and field."""


@dataclass(frozen=True, kw_only=True)
class ServerConfig:
    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict, repr=False)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    confirm: bool = False
    approval: dict[str, ApprovalMode] = field(default_factory=dict)  # tool name or "*" -> mode
    timeout: float = 300.0
    protocol: str = "auto"  # the MCP revision to speak: auto (the newest the server offers), 2025-11-25, 2026-07-28

    @property
    def modes(self) -> dict[str, ApprovalMode]:
        """The approval table the policy reads: ``approval``, with ``confirm`` as ``{"*": "ask"}`` under it."""
        return {"*": "ask", **self.approval} if self.confirm and "*" not in self.approval else self.approval

    @property
    def transport(self) -> str:
        return "stdio" if self.command else "http"


def load_tool_config(path: Path) -> tuple[ServerConfig, ...]:
    """Read and validate a ``mcpServers`` file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ToolConfigError(f"--mcp-config: cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ToolConfigError(f"--mcp-config: {path} is not valid JSON ({exc})") from None
    return parse_tool_config(data)


def parse_tool_config(data: Any) -> tuple[ServerConfig, ...]:
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ToolConfigError('--mcp-config: expected an object {"mcpServers": {name: {...}}}')
    return tuple(
        _server(name, entry)
        for name, entry in servers.items()
        if not (isinstance(entry, dict) and entry.get("disabled") is True)  # the usual way to keep one switched off
    )


def _server(name: str, entry: Any) -> ServerConfig:
    where = f"--mcp-config: server {name!r}"
    if not NAME.match(name):
        raise ToolConfigError(f"{where}: a name is 1-40 letters, digits, '_' or '-'")
    if not isinstance(entry, dict):
        raise ToolConfigError(f"{where}: must be an object")
    known = {"command", "args", "env", "cwd", "url", "headers", "confirm", "approval", "timeout", "type", "disabled"}
    known.add("protocol")
    unknown = sorted(set(entry) - known)
    if unknown:
        raise ToolConfigError(f"{where}: unknown field {unknown[0]!r}")
    command, url = entry.get("command"), entry.get("url")
    if bool(command) == bool(url):
        raise ToolConfigError(f"{where}: give either 'command' (stdio) or 'url' (streamable HTTP)")
    if command is not None and not isinstance(command, str):
        raise ToolConfigError(f"{where}: 'command' must be a string")
    if url is not None and not (isinstance(url, str) and url.startswith(("http://", "https://"))):
        raise ToolConfigError(f"{where}: 'url' must start with http:// or https://")
    args = entry.get("args", [])
    if not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
        raise ToolConfigError(f"{where}: 'args' must be a list of strings")
    env, headers = _strings(entry.get("env", {}), f"{where}: 'env'"), _strings(entry.get("headers", {}), where)
    timeout = entry.get("timeout", 300)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
        raise ToolConfigError(f"{where}: 'timeout' must be a number of seconds above 0")
    protocol = entry.get("protocol", "auto")
    if protocol not in PROTOCOLS:
        raise ToolConfigError(f"{where}: 'protocol' must be one of {', '.join(PROTOCOLS)}")
    confirm = entry.get("confirm", False)
    if not isinstance(confirm, bool):
        raise ToolConfigError(f"{where}: 'confirm' must be true or false")
    approval = parse_modes(entry["approval"], where) if "approval" in entry else {}
    if isinstance(approval, str):
        raise ToolConfigError(approval)
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ToolConfigError(f"{where}: 'cwd' must be a string")
    return ServerConfig(
        name=name,
        command=command,
        args=tuple(args),
        env=env,
        cwd=cwd,
        url=url,
        headers=headers,
        confirm=confirm,
        approval=approval,
        timeout=float(timeout),
        protocol=protocol,
    )


def _strings(value: Any, where: str) -> dict[str, str]:
    if not (isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())):
        raise ToolConfigError(f"{where} must map names to strings")
    return dict(value)
