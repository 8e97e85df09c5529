"""Every option of the ``run`` command is also its ``LEDGERCHAT_<NAME>`` variable, and the start-up line is a
promise: when "Ledger Chat on …" is printed, the port accepts connections.

The option list is read from the parser itself, so an option added later without its variable fails here; each
option's variable must give the same configuration as the option on the command line, and not the default one.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from app.config import AppConfig, load_config
from app.options import parser

ROOT = Path(__file__).resolve().parents[2]
NOT_OPTIONS = {"help"}  # argparse's own
NEEDS = {"admin_can_read": ("--accounts", "local")}  # an option that means something only beside another one


def run_options() -> list[argparse.Action]:
    """The ``run`` command's options, as its parser lists them (the sub-commands' own options aside)."""
    return [a for a in parser()._actions if a.option_strings and a.dest not in NOT_OPTIONS]


def sample(name: str, tmp_path: Path) -> str:
    """A valid value for the option ``name`` that differs from its default."""
    info = tmp_path / "models.json"
    info.write_text(json.dumps({"openai/x": {"supports_vision": True}}))
    values = {
        "model": "openai/some-model",
        "api_base": "http://127.0.0.1:9/v1",
        "data_dir": str(tmp_path / "data"),
        "database_url": "postgresql://someone@127.0.0.1:9/db",
        "host": "127.0.0.2",
        "port": "9123",
        "demo_chunk_delay": "0.5",
        "models": "openai/a,openai/b",
        "mcp_config": str(tmp_path / "tools.json"),
        "titles": "off",
        "accounts": "local",  # (oidc needs its issuer and client id too: tests/browser/test_oidc.py)
        "oidc_issuer": "https://idp.example.org",
        "oidc_client_id": "ledger-chat",
        "oidc_admin_group": "admins",
        "oidc_member_group": "team",
        "max_attachment_mb": "5",
        "model_info": str(info),
        "spend_limit": "$0.50/day,20000 tokens/month",
        "leave_policy": "cancel",
        "first_chunk_timeout": "7",
        "idle_timeout": "7",
        "max_resends": "4",
        "max_input_chars": "777",
        "max_steps": "7",
        "loop_guard": "5",
        "tool_grace": "7",
        "tool_result_chars": "777",
        "token": "t" * 24,
        "allowed_hosts": "chat.example.org",
        "forwarded_allow_ips": "127.0.0.1",
        "otlp_endpoint": "http://127.0.0.1:4318",
        "public_url": "https://chat.example.org",
    }
    return values[name]


def test_every_option_of_the_run_command_is_read_from_its_ledgerchat_variable(tmp_path: Path) -> None:
    options = run_options()
    assert {a.dest for a in options} >= {"no_tools", "show", "model", "no_token", "otel_content"}
    default = load_config([], {})
    for action in options:
        flag = max(action.option_strings, key=len)
        variable = "LEDGERCHAT_" + flag.removeprefix("--").replace("-", "_").upper()
        switch = action.nargs == 0
        value = "1" if switch else sample(action.dest, tmp_path)
        needs = list(NEEDS.get(action.dest, ()))
        given = load_config([*needs, flag] if switch else [*needs, flag, value], {})
        from_variable: AppConfig = load_config(needs, {variable: value})
        assert from_variable == given, f"{variable}={value} is not read as {flag}"
        assert from_variable != default, f"{flag} changes nothing (so its variable cannot be told apart)"


@pytest.mark.parametrize(("value", "on"), [("1", True), ("true", True), ("TRUE", True), ("0", False), ("", False)])
def test_ledgerchat_no_tools_turns_the_tool_servers_off(value: str, on: bool) -> None:
    assert load_config([], {"LEDGERCHAT_NO_TOOLS": value}).no_tools is on


def test_when_the_start_up_line_appears_the_port_accepts_a_connection_at_once(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "LEDGERCHAT_", "NICEGUI_"))}
    app = subprocess.Popen(
        [sys.executable, str(ROOT / "main.py"), "--port", str(port), "--data-dir", str(tmp_path / "data")],
        cwd=ROOT,
        env={**env, "LEDGERCHAT_TITLES": "off"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert app.stdout is not None
        for line in app.stdout:  # ends if the app exits; a hang fails at pytest-timeout's limit, with a stack
            if line.startswith("Ledger Chat on "):
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    pass  # the first try, no retry: it accepts
                break
        else:
            raise AssertionError(f"the app exited with {app.wait()} before printing its start-up line")
    finally:
        app.terminate()
        app.wait(timeout=30)
