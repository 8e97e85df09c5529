"""Command-line and environment configuration (every option also as a ``LEDGERCHAT_*`` variable).

Guarantees: ``load_config(argv, environ)`` returns a validated ``AppConfig`` or raises ``ConfigError`` with one
line naming the bad value; every option of the ``run`` command is also read from ``LEDGERCHAT_<NAME>`` (its long
name upper-cased, dashes as underscores; a switch such as ``--no-tools`` is on for ``1`` or ``true``);
command-line options win over environment variables; the engine's limits and their
defaults are ``engine.turns.settings.Limits`` (written once, read here); API keys are read from the provider's usual
environment variables by litellm and never stored here.

Access: a loopback bind (the default) needs no token unless ``--token`` (or ``LEDGERCHAT_TOKEN``) asks for one;
any other bind always needs one (``needs_token``), and ``--no-token`` there refuses to start. ``--token`` alone
asks for a generated token; a given token is at least ``MIN_TOKEN_CHARS`` long and never shown in ``repr``.
Proxies whose ``X-Forwarded-*`` headers are believed: ``--forwarded-allow-ips`` (``app.proxy_config``), none by default.

Storage: ``--database-url`` (or ``LEDGERCHAT_DATABASE_URL``) keeps the ledger in PostgreSQL instead of TinyDB files;
it may hold a password, so it is never shown in ``repr`` or an error.
"""

from __future__ import annotations

import argparse
import dataclasses
import ipaddress
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.options import APP_OPTIONS, LIMIT_OPTIONS, parser
from app.proxy_config import trusted_proxies
from app.telemetry_config import TelemetryConfig, telemetry_config
from engine.files import FileLimits
from engine.spend import parse_limit
from engine.turns import Limits
from store.limits import SpendLimit

DEMO_MODEL = "demo"
MIN_TOKEN_CHARS = 16
_LIMITS = Limits()


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
    limits: Limits = field(default_factory=Limits)
    demo_chunk_delay: float = 1 / 30
    mcp_config: Path | None = None
    models: tuple[str, ...] = ()
    no_tools: bool = False
    conversation: str | None = None
    show: bool = False
    token: str | None = field(default=None, repr=False)
    no_token: bool = False
    allowed_hosts: tuple[str, ...] = ()
    forwarded_allow_ips: tuple[str, ...] = ()  # app.proxy_config
    database_url: str | None = field(default=None, repr=False)  # may hold a password: never shown
    from_data_dir: Path | None = None
    owner: str | None = None  # ``migrate --owner NAME``: hand unowned conversations to this account (app.handover)
    dry_run: bool = False
    max_attachment_mb: float = 20.0
    model_info: Path | None = None
    with_files: bool = False
    accounts: str = "personal"  # personal: no sign-in; local: team mode, accounts of ``main.py users``; oidc
    oidc_issuer: str | None = None
    oidc_client_id: str | None = None
    oidc_admin_group: str | None = None
    oidc_member_group: str | None = None
    public_url: str | None = None  # where people reach this app (a proxy's https address): sign-ins come back here
    oidc_client_secret: str | None = field(default=None, repr=False)  # LEDGERCHAT_OIDC_CLIENT_SECRET only
    admin_can_read: bool = False  # team mode: admins may read anyone's chat, each read recorded for its owner
    limit_value: str | None = None  # ``users limit NAME VALUE``: the spend limit to set
    spend_limit: str = ""  # ``--spend-limit``: everyone's default spend limit (``engine.spend.parse_limit``)
    users: tuple[str, str | None, bool, bool] | None = None  # ``users`` command: (action, name, admin, stdin)
    titles: str = "model"  # model: each chat is named by the model after its first answer; off: by its first message
    telemetry: TelemetryConfig = field(default_factory=TelemetryConfig)  # --otlp-endpoint, --otel-content

    @property
    def file_limits(self) -> FileLimits:
        return FileLimits.from_mb(self.max_attachment_mb)

    @property
    def default_limit(self) -> SpendLimit:
        """``--spend-limit`` read (``ValueError`` saying what is wrong)."""
        return parse_limit(self.spend_limit)

    @property
    def is_demo(self) -> bool:
        return self.model == DEMO_MODEL

    @property
    def leave_policy(self) -> str:
        return self.limits.leave_policy

    @property
    def team(self) -> bool:
        return self.accounts != "personal"

    @property
    def is_loopback(self) -> bool:
        return is_loopback(self.host)

    @property
    def needs_token(self) -> bool:
        """Personal mode's token (team mode signs people in instead; its token only reaches the demo model)."""
        return self.token is not None or not self.is_loopback

    @property
    def url_host(self) -> str:
        """The bound host as it goes into a URL (IPv6 in brackets)."""
        return f"[{self.host}]" if ":" in self.host else self.host

    @property
    def local_url(self) -> str:
        """A URL of this server that works from this machine (a wildcard bind is reached on loopback)."""
        host = {"0.0.0.0": "127.0.0.1", "::": "[::1]", "localhost": "127.0.0.1"}.get(self.host, self.url_host)
        return f"http://{host}:{self.port}"


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` serves this machine only (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def load_config(argv: Sequence[str], environ: Mapping[str, str]) -> AppConfig:
    args = parser().parse_args(list(argv))
    app: dict[str, Any] = {
        "command": args.command or "run",
        "show": switch(args, environ, "show"),
        "no_tools": switch(args, environ, "no_tools"),
    }
    limits: dict[str, Any] = {}
    for options, target in ((APP_OPTIONS, app), (LIMIT_OPTIONS, limits)):
        for name, kind, _ in options:
            raw = getattr(args, name, None)
            if raw is None:
                raw = environ.get(f"LEDGERCHAT_{name.upper()}")
            if raw is None or raw == "":
                continue
            try:
                target[name] = kind(raw)
            except ValueError:
                raise ConfigError(f"--{name.replace('_', '-')}: {raw!r} is not a valid {kind.__name__}") from None
    if args.command == "export":
        app["conversation"] = getattr(args, "conversation", None)
        app["with_files"] = bool(getattr(args, "with_files", False))
    elif args.command == "migrate":
        app["from_data_dir"] = Path(args.from_data_dir) if args.from_data_dir else None
        app["owner"], app["dry_run"] = args.owner, bool(args.dry_run)
    elif args.command == "users":
        app["users"] = (args.action, args.name, bool(args.admin), bool(args.password_stdin))
        app["limit_value"] = args.value
    else:
        app.update(_access(args, environ))
        app["oidc_client_secret"] = environ.get("LEDGERCHAT_OIDC_CLIENT_SECRET") or None
        app["admin_can_read"] = switch(args, environ, "admin_can_read")
    if "models" in app:
        app["models"] = tuple(dict.fromkeys(m.strip() for m in str(app["models"]).split(",") if m.strip()))
    try:
        telemetry = telemetry_config(args, environ)  # --otlp-endpoint, --otel-content (app.telemetry_config)
        app["forwarded_allow_ips"] = trusted_proxies(args, environ)
        config = AppConfig(**app, limits=dataclasses.replace(_LIMITS, **limits), telemetry=telemetry)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    _validate(config)
    return config


def _validate(c: AppConfig) -> None:
    if not c.model.strip():
        raise ConfigError("--model: must not be empty")
    if not 1 <= c.port <= 65535:
        raise ConfigError(f"--port: {c.port} is not a port number (1-65535)")
    if c.host != "localhost":
        try:
            ipaddress.ip_address(c.host)
        except ValueError:
            raise ConfigError(f"--host: {c.host!r} is not an IP address") from None
    if c.database_url is not None and not c.database_url.startswith(("postgresql://", "postgres://")):
        raise ConfigError(
            "--database-url: must start with postgresql:// (the value is not shown: it may hold a password)"
        )
    if c.command == "migrate" and (c.owner is None) == (c.from_data_dir is None):
        raise ConfigError("migrate: give --from-data-dir (a copy into PostgreSQL) or --owner NAME (a hand-over)")
    if c.command == "migrate" and c.from_data_dir is not None and not c.database_url:
        raise ConfigError("migrate: --database-url (or LEDGERCHAT_DATABASE_URL) names the database to copy into")
    try:
        c.file_limits  # noqa: B018 - validates --max-attachment-mb
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if c.model_info is not None:
        load_model_info(c.model_info)
    if c.accounts not in ("personal", "local", "oidc"):
        raise ConfigError(f"--accounts: {c.accounts!r} must be 'personal', 'local' or 'oidc'")
    if c.accounts == "oidc" and not (c.oidc_issuer and c.oidc_client_id):
        raise ConfigError(
            "--accounts oidc: give --oidc-issuer and --oidc-client-id (the secret in LEDGERCHAT_OIDC_CLIENT_SECRET)"
        )
    if c.admin_can_read and not c.team:
        raise ConfigError("--admin-can-read: only with accounts (--accounts local or oidc); personal mode has no admin")
    if c.public_url and not c.public_url.startswith(("https://", "http://")):
        raise ConfigError(f"--public-url: {c.public_url!r} must start with https:// (or http://)")
    if c.oidc_issuer and not c.oidc_issuer.startswith(("https://", "http://")):
        raise ConfigError(f"--oidc-issuer: {c.oidc_issuer!r} must start with https:// (or http:// on this machine)")
    if c.users is not None and c.users[0] != "list" and not c.users[1]:
        raise ConfigError(f"users {c.users[0]}: name the account (users {c.users[0]} NAME)")
    try:
        c.default_limit  # noqa: B018 - validates --spend-limit
    except ValueError as exc:
        raise ConfigError(f"--spend-limit: {exc}") from None
    if c.titles not in ("model", "off"):
        raise ConfigError(f"--titles: {c.titles!r} must be 'model' or 'off'")
    if c.demo_chunk_delay < 0:
        raise ConfigError("--demo-chunk-delay: must not be negative")
    if c.api_base and not c.api_base.startswith(("http://", "https://")):
        raise ConfigError(f"--api-base: {c.api_base!r} must start with http:// or https://")
    if c.no_token and c.token is not None:
        raise ConfigError("--no-token: cannot be used together with --token")
    if c.no_token and not c.is_loopback:
        raise ConfigError(
            f"--no-token: refusing to serve {c.host} without a token; anyone who can reach it could read every "
            "conversation and spend the model key (bind 127.0.0.1, or drop --no-token)"
        )
    if c.token and (len(c.token) < MIN_TOKEN_CHARS or not c.token.isprintable() or " " in c.token):
        raise ConfigError(f"--token: must be at least {MIN_TOKEN_CHARS} printable characters without spaces")


def load_model_info(path: Path) -> dict[str, Any]:
    """The ``--model-info`` file: an object of model string → object of litellm model-map keys."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"--model-info: {path} cannot be read ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise ConfigError(f"--model-info: {path} is not valid JSON ({exc})") from None
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, dict) for k, v in data.items()):
        raise ConfigError(
            f"--model-info: {path} must be a JSON object of model names to objects, "
            'e.g. {"openai/my-model": {"supports_vision": true}}'
        )
    return data


def switch(args: argparse.Namespace, environ: Mapping[str, str], name: str) -> bool:
    """An on/off option: given on the command line, or ``LEDGERCHAT_<NAME>`` set to ``1`` or ``true``."""
    return bool(getattr(args, name, False)) or environ.get(f"LEDGERCHAT_{name.upper()}", "").lower() in ("1", "true")


def _access(args: argparse.Namespace, environ: Mapping[str, str]) -> dict[str, Any]:
    token = getattr(args, "token", None)
    if token is None:
        token = environ.get("LEDGERCHAT_TOKEN") or None
    no_token = switch(args, environ, "no_token")
    hosts = getattr(args, "allowed_hosts", None) or environ.get("LEDGERCHAT_ALLOWED_HOSTS", "")
    return {
        "token": token,
        "no_token": no_token,
        "allowed_hosts": tuple(h.strip().lower() for h in hosts.split(",") if h.strip()),
    }
