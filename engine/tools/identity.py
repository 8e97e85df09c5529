"""How Ledger Chat introduces itself to MCP servers: ``ledger-chat`` and the app's version.

Guarantees: ``client_info()`` is the SDK's ``Implementation`` named ``ledger-chat`` (never the SDK's default name)
with ``app_version()``: the installed package's version, else the one in the source tree's ``pyproject.toml``,
else ``0+unknown``; read once.
"""

from __future__ import annotations

import functools
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

CLIENT_NAME = "ledger-chat"
PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


@functools.cache
def app_version() -> str:
    try:
        return metadata.version(CLIENT_NAME)
    except metadata.PackageNotFoundError:
        pass
    try:
        version = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["version"]
    except (OSError, KeyError, ValueError):
        return "0+unknown"
    return str(version)


def client_info() -> Any:
    from mcp.types import Implementation

    return Implementation(name=CLIENT_NAME, title="Ledger Chat", version=app_version())
