"""The command line: every option with its help, its type and its ``LEDGERCHAT_<NAME>`` variable, and the parser.

Guarantees: ``APP_OPTIONS`` and ``LIMIT_OPTIONS`` are the one list of options that take a value (``app.config``
reads each from the command line, else from its variable); ``parser`` adds each of them, the switches and the
sub-commands (``export``, ``migrate``, ``users``, ``acp``: the app's options, served to an editor); an option not
given stays unset (``argparse.SUPPRESS``), so a variable or the default applies.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from app.proxy_config import proxy_flag
from app.telemetry_config import telemetry_flags
from engine.turns import Limits

__all__ = ["APP_OPTIONS", "GENERATE", "LIMIT_OPTIONS", "parser"]

GENERATE = ""  # ``--token`` without a value: generate one at start-up
_LIMITS = Limits()

APP_OPTIONS: tuple[tuple[str, type, str], ...] = (
    ("model", str, "any litellm model string (provider key from its usual env variable); 'demo' = offline demo"),
    ("api_base", str, "base URL of an OpenAI-compatible endpoint (e.g. a local server)"),
    ("data_dir", Path, "folder for the ledger files (default ./data)"),
    (
        "database_url",
        str,
        "keep the ledger in PostgreSQL, shared by several instances: postgresql://user:password@host/db "
        "(default: TinyDB files in --data-dir)",
    ),
    ("host", str, "interface to bind (default 127.0.0.1)"),
    ("port", int, "port (default 8080)"),
    ("demo_chunk_delay", float, "seconds between demo-model chunks (default 0.033)"),
    ("models", str, "more litellm model strings a chat may pick, comma-separated ('demo' = the demo model)"),
    (
        "mcp_config",
        Path,
        "JSON file of tool servers in the mcpServers shape (default: the demo tools, demo model only)",
    ),
    ("titles", str, "model: the model names each chat after its first answer; off: its first message (default model)"),
    (
        "accounts",
        str,
        "personal: one person, no sign-in (default); local: a team, everyone signs in with an account of "
        "'main.py users add'; oidc: a team, everyone signs in with an OpenID Connect provider (--oidc-issuer)",
    ),
    ("oidc_issuer", str, "the OpenID Connect provider's issuer URL (--accounts oidc), e.g. https://idp.example.org"),
    ("oidc_client_id", str, "this app's client id at the provider (the secret: LEDGERCHAT_OIDC_CLIENT_SECRET)"),
    ("oidc_admin_group", str, "people whose ID token's 'groups' claim holds this group are admins (--accounts oidc)"),
    (
        "oidc_member_group",
        str,
        "only people whose ID token's 'groups' claim holds this group (or the admin group) may sign in "
        "(--accounts oidc)",
    ),
    (
        "public_url",
        str,
        "the address people reach this app at, e.g. https://chat.example.org behind a proxy: tool servers' sign-ins "
        "come back to it, and with https it is the address of this app's OAuth client ID metadata document",
    ),
    ("max_attachment_mb", float, "largest file a message may carry, in MB (default 20; 50 MB or one file per message)"),
    (
        "spend_limit",
        str,
        "what each person may spend, e.g. '$0.50/day,$10/month' or '200000 tokens/day' (UTC days and months; "
        "dollars as litellm's cost map and --model-info price them); team mode: everyone's default, admins set "
        "per-person values on /admin/users or with 'main.py users limit'",
    ),
    (
        "model_info",
        Path,
        "JSON file in litellm's model-map shape declaring what models take, e.g. "
        '{"openai/my-model": {"supports_vision": true, "max_input_tokens": 32000}}',
    ),
)
LIMIT_OPTIONS: tuple[tuple[str, type, str], ...] = (
    ("leave_policy", str, f"what leaving a streaming chat does: continue or cancel (default {_LIMITS.leave_policy})"),
    ("first_chunk_timeout", float, f"seconds to wait for the first chunk (default {_LIMITS.first_chunk_timeout:g})"),
    ("idle_timeout", float, f"seconds to wait between chunks (default {_LIMITS.idle_timeout:g})"),
    ("max_resends", int, f"automatic re-sends before the first chunk (default {_LIMITS.max_resends})"),
    ("max_input_chars", int, f"longest message accepted (default {_LIMITS.max_input_chars})"),
    ("max_steps", int, f"model calls in one agent turn before it stops (default {_LIMITS.max_steps})"),
    (
        "loop_guard",
        int,
        f"the same tool with the same arguments this many times in a row ends the turn (default {_LIMITS.loop_guard};"
        " 0: off)",
    ),
    ("tool_grace", float, f"seconds a stopped tool call gets to return (default {_LIMITS.tool_grace:g})"),
    ("tool_result_chars", int, f"longest tool result sent to the model (default {_LIMITS.tool_result_chars})"),
)


def parser() -> argparse.ArgumentParser:
    """The command line: every option of ``APP_OPTIONS`` and ``LIMIT_OPTIONS`` (each also read from its
    ``LEDGERCHAT_<NAME>`` variable by ``app.config.load_config``), the switches and the sub-commands."""
    top = argparse.ArgumentParser(prog="main.py", description="Ledger Chat: a chat workbench with an event ledger.")
    top.set_defaults(command="run")
    _add_options(top)
    top.add_argument("--show", action="store_true", help="open a browser tab on start")
    top.add_argument("--no-tools", action="store_true", help="start no tool server (not even the demo's)")
    top.add_argument(
        "--token",
        nargs="?",
        const=GENERATE,
        default=argparse.SUPPRESS,
        help="require this access token (alone: generate one); always on for a non-loopback --host",
    )
    top.add_argument(
        "--no-token", action="store_true", default=argparse.SUPPRESS, help="no token (loopback binds only)"
    )
    top.add_argument(
        "--allowed-hosts",
        default=argparse.SUPPRESS,
        help="comma-separated extra names the browser may use for this server (Host header), e.g. chat.example.org",
    )
    top.add_argument(
        "--admin-can-read",
        action="store_true",
        help="team mode: admins may read anyone's conversation (/admin/read); each read is written to its owner's "
        "ledger and shown in their audit panel",
    )
    telemetry_flags(top)
    proxy_flag(top)
    sub = top.add_subparsers(dest="command")
    export = sub.add_parser("export", help="write the ledger as JSON Lines to stdout (or, with --otlp, as traces)")
    export.add_argument("--conversation", help="only this conversation id")
    export.add_argument(
        "--with-files", action="store_true", help="write a zip (events.jsonl and files/<sha256>) with the files' bytes"
    )
    telemetry_flags(export, export=True)
    _add_options(export, only=("data_dir", "database_url"))
    acp = sub.add_parser(
        "acp",
        help="run as an Agent Client Protocol agent on stdin/stdout for an editor (Zed, JetBrains): the same data, "
        "models, tool servers, presets and approvals as the app (docs/operations.md)",
    )
    _add_options(acp)
    acp.add_argument("--no-tools", action="store_true", default=argparse.SUPPRESS, help="start no tool server")
    users = sub.add_parser("users", help="team mode's accounts: add, list, disable, enable, password, reset, limit")
    users.add_argument("action", choices=("add", "list", "disable", "enable", "password", "reset", "limit"))
    users.add_argument("name", nargs="?", help="the account's username (lowercase letters, digits, . _ @ -)")
    users.add_argument(
        "value",
        nargs="?",
        help="limit: the account's spend limit ('$0.50/day,$10/month', '20000 tokens/day', 'none': no cap, "
        "'default': everyone's); NAME 'default' sets everyone's; without a value, print the limit in force",
    )
    users.add_argument("--admin", action="store_true", help="add: the account is an admin")
    users.add_argument(
        "--password-stdin", action="store_true", help="add, password: read the password from standard input"
    )
    _add_options(users, only=("data_dir", "database_url"))
    migrate = sub.add_parser(
        "migrate",
        help="copy a TinyDB data folder into PostgreSQL (safe to re-run, verified), or with --owner hand every "
        "conversation nobody owns to an account (moving to --accounts local)",
    )
    migrate.add_argument("--from-data-dir", help="the data folder to copy into --database-url")
    migrate.add_argument("--owner", help="the account every conversation without an owner is handed to")
    migrate.add_argument("--dry-run", action="store_true", help="with --owner: say what would change, change nothing")
    _add_options(migrate, only=("data_dir", "database_url"))
    return top


def _add_options(parser: argparse.ArgumentParser, only: tuple[str, ...] | None = None) -> None:
    for name, _, help_text in APP_OPTIONS + LIMIT_OPTIONS:
        if only is None or name in only:
            parser.add_argument(f"--{name.replace('_', '-')}", dest=name, default=argparse.SUPPRESS, help=help_text)
