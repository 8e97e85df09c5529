"""The bundled demo tool server, started for real over stdio, and what its record file proves."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from engine.tools.config import ServerConfig
from engine.tools.hub import ToolHub
from ledger.events.approval import ApprovalMode

ROOT = Path(__file__).resolve().parents[2]


def demo_server_config(
    record: Path,
    *,
    confirm: bool = False,
    name: str = "demo",
    protocol: str = "auto",
    timeout: float = 300.0,
    approval: dict[str, ApprovalMode] | None = None,
    env: dict[str, str] | None = None,
) -> ServerConfig:
    return ServerConfig(
        name=name,
        command=sys.executable,
        args=("-m", "demo.tools_server"),
        cwd=str(ROOT),
        env={"LEDGERCHAT_DEMO_TOOL_RECORD": str(record), **(env or {})},
        confirm=confirm,
        protocol=protocol,
        timeout=timeout,
        approval=approval or {},
    )


def second_server_config(
    name: str = "second", *, protocol: str = "auto", env: dict[str, str] | None = None
) -> ServerConfig:
    """The second SDK server of the "/" and "@" tests (``tests.support.context_server``), over stdio, speaking
    ``protocol``; ``env`` is added to its environment (``LC_CONTEXT_NO_SUBSCRIBE``, ``LC_CONTEXT_RECORD``)."""
    return ServerConfig(
        name=name,
        command=sys.executable,
        args=("-m", "tests.support.context_server"),
        cwd=str(ROOT),
        protocol=protocol,
        env=env or {},
    )


def demo_tools_options(folder: Path) -> tuple[str, ...]:
    """An app's command-line options that run the demo tool server (stdio MCP) from an ``mcp.json`` in ``folder``,
    its record file beside it."""
    server = demo_server_config(folder / "record.jsonl")
    entry = {"command": server.command, "args": list(server.args), "cwd": server.cwd, "env": server.env}
    (folder / "mcp.json").write_text(json.dumps({"mcpServers": {"demo": entry}}))
    return ("--mcp-config", str(folder / "mcp.json"))


async def demo_hub(
    tmp_path: Path,
    *,
    confirm: bool = False,
    protocol: str = "auto",
    timeout: float = 300.0,
    approval: dict[str, ApprovalMode] | None = None,
    env: dict[str, str] | None = None,
) -> tuple[ToolHub, Path]:
    """A started hub with the demo server (speaking ``protocol``); its record file (what the server's handlers saw).
    ``env`` is added to the server's environment (``LEDGERCHAT_DEMO_DELETE_CHANGED`` changes ``delete_note``'s
    description)."""
    record = tmp_path / "tool-record.jsonl"
    config = demo_server_config(record, confirm=confirm, protocol=protocol, timeout=timeout, approval=approval, env=env)
    hub = ToolHub((config,), log_dir=tmp_path / "logs")
    await hub.start()
    assert hub.health()[0].state == "ready", hub.health()
    return hub, record


def server_record(record: Path) -> list[dict[str, Any]]:
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text().splitlines() if line.strip()]


def demo_tools_app_env(monkeypatch: Any, tmp_path: Path, upstream: Any, key: str, **server: Any) -> None:
    """The environment of an app the ``user`` fixture starts: the scripted upstream's model and the demo tool
    server as its one server (``server``: more of that server's config, such as ``protocol`` or ``env``)."""
    config = tmp_path / "tools.json"
    entry = {"command": sys.executable, "args": ["-m", "demo.tools_server"], "cwd": str(ROOT), **server}
    config.write_text(json.dumps({"mcpServers": {"demo": entry}}))
    monkeypatch.setenv("LEDGERCHAT_MODEL", "openai/test-model")
    monkeypatch.setenv("LEDGERCHAT_API_BASE", upstream.base_url)
    monkeypatch.setenv("LEDGERCHAT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("LEDGERCHAT_MCP_CONFIG", str(config))
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.setenv("LEDGERCHAT_ALLOWED_HOSTS", "test")  # the simulated user's requests name host "test"
