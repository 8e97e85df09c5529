"""Command-line and environment configuration (every option also as a ``LEDGERCHAT_*`` variable).

Guarantees: ``load_config(argv, environ)`` returns a validated ``AppConfig`` or raises ``ConfigError`` with one
line naming the bad value; command-line options win over environment variables; API keys are read from the
provider's usual environment variables by litellm and never stored here.
"""

from __future__ import annotations

import argparse
import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from engine.settings import check_limits

DEMO_MODEL = "demo"


class ConfigError(ValueError):
    """A setting is invalid; the message is one line naming it."""


@dataclass(frozen=True, kw_only=True)
class AppConfig:
    command: str = "run"
    model: str = DEMO_MODEL
    api_base: str | None = None
    data_dir: Path = Path("data")
    host: str = "127.0.0.1"
    port: int = 8080
    leave_policy: str = "continue"
    first_chunk_timeout: float = 60.0
    idle_timeout: float = 30.0
    max_resends: int = 2
    max_input_chars: int = 32_000
    demo_chunk_delay: float = 1 / 30
    conversation: str | None = None
    show: bool = False

    @property
    def is_demo(self) -> bool:
        return self.model == DEMO_MODEL


_OPTIONS: tuple[tuple[str, type, str], ...] = (
    ("model", str, "any litellm model string (provider key from its usual env variable); 'demo' = offline demo"),
    ("api_base", str, "base URL of an OpenAI-compatible endpoint (e.g. a local server)"),
    ("data_dir", Path, "folder for the ledger files (default ./data)"),
    ("host", str, "interface to bind (default 127.0.0.1)"),
    ("port", int, "port (default 8080)"),
    ("leave_policy", str, "what leaving a streaming chat does: continue (default) or cancel"),
    ("first_chunk_timeout", float, "seconds to wait for the first chunk (default 60)"),
    ("idle_timeout", float, "seconds to wait between chunks (default 30)"),
    ("max_resends", int, "automatic re-sends before the first chunk (default 2)"),
    ("max_input_chars", int, "longest message accepted (default 32000)"),
    ("demo_chunk_delay", float, "seconds between demo-model chunks (default 0.033)"),
)


def load_config(argv: Sequence[str], environ: Mapping[str, str]) -> AppConfig:
    parser = _parser()
    args = parser.parse_args(list(argv))
    values: dict[str, object] = {"command": args.command or "run"}
    for name, kind, _ in _OPTIONS:
        raw = getattr(args, name, None)
        if raw is None:
            raw = environ.get(f"LEDGERCHAT_{name.upper()}")
        if raw is None or raw == "":
            continue
        try:
            values[name] = kind(raw)
        except ValueError:
            raise ConfigError(f"--{name.replace('_', '-')}: {raw!r} is not a valid {kind.__name__}") from None
    if args.command == "export":
        values["conversation"] = getattr(args, "conversation", None)
    values["show"] = bool(getattr(args, "show", False))
    config = AppConfig(**values)  # type: ignore[arg-type]
    _validate(config)
    return config


def _validate(c: AppConfig) -> None:
    try:
        check_limits(
            model=c.model,
            first_chunk_timeout=c.first_chunk_timeout,
            idle_timeout=c.idle_timeout,
            max_resends=c.max_resends,
            max_input_chars=c.max_input_chars,
            leave_policy=c.leave_policy,
        )
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if not 1 <= c.port <= 65535:
        raise ConfigError(f"--port: {c.port} is not a port number (1-65535)")
    if c.host != "localhost":
        try:
            ipaddress.ip_address(c.host)
        except ValueError:
            raise ConfigError(f"--host: {c.host!r} is not an IP address") from None
    if c.demo_chunk_delay < 0:
        raise ConfigError("--demo-chunk-delay: must not be negative")
    if c.api_base and not c.api_base.startswith(("http://", "https://")):
        raise ConfigError(f"--api-base: {c.api_base!r} must start with http:// or https://")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="main.py", description="Ledger Chat: a chat workbench with an event ledger.")
    parser.set_defaults(command="run")
    _add_options(parser)
    parser.add_argument("--show", action="store_true", help="open a browser tab on start")
    sub = parser.add_subparsers(dest="command")
    export = sub.add_parser("export", help="write the ledger as JSON Lines to stdout")
    export.add_argument("--conversation", help="only this conversation id")
    _add_options(export, only=("data_dir",))
    return parser


def _add_options(parser: argparse.ArgumentParser, only: tuple[str, ...] | None = None) -> None:
    for name, _, help_text in _OPTIONS:
        if only is None or name in only:
            parser.add_argument(f"--{name.replace('_', '-')}", dest=name, default=argparse.SUPPRESS, help=help_text)
