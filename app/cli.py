"""The command line: ``run`` (the default), ``export``, ``migrate``, ``users`` (``app.users``), ``acp`` (``app.acp``).

Guarantees: a bad option, a model litellm cannot route, a missing key or a broken tools file stops start-up with
one line on stderr and exit code 2, before anything is opened; under NiceGUI's user simulation (tests) the command
line is ignored and the model check skipped.
"""

from __future__ import annotations

import os
import sys

from app.commands import export, migrate
from app.config import ConfigError, load_config
from app.providers import check_model, tool_servers
from app.serve import run
from engine.tools import ToolConfigError


def main(argv: list[str] | None = None) -> int:
    simulated = os.environ.get("NICEGUI_USER_SIMULATION") == "true"
    args = [] if simulated else (sys.argv[1:] if argv is None else argv)
    try:
        config = load_config(args, os.environ)
        if config.command == "acp":  # an editor's agent on stdin/stdout: nothing else may write to stdout
            from app.acp import acp

            return acp(config)
        if config.command == "export":
            from app.telemetry import backfill  # --otlp URL: the stored attempts as traces

            return backfill(config) if config.telemetry.traces_url else export(config)
        if config.command == "migrate" and config.owner is not None:
            from app.handover import hand_over

            return hand_over(config)
        if config.command == "migrate":
            return migrate(config)
        if config.command == "users":
            from app.users import users

            return users(config)
        if not config.is_demo and not simulated:
            check_model(config)
        tool_servers(config)  # a broken tools file stops start-up with one line
    except (ConfigError, ToolConfigError) as exc:
        print(f"ledger-chat: {exc}", file=sys.stderr)
        return 2
    return run(config)
