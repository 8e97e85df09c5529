"""The command line: one-line errors for bad settings and a busy port, model checks, the JSON Lines export, and
``tasks.py app`` handing signals to the app. What stops before anything is opened runs in the test's process
(``tests.support.cli.run_cli``); the process itself is started where it matters (its stdout's bytes, a port, a
signal)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from app.config import ConfigError, load_config
from ledger.codec import from_dict, to_jsonl
from ledger.events.core import Failed, Renamed
from store.tinydb.store import Store
from tests.support.cli import run_cli
from tests.support.ledger_builders import conversation_events
from tests.support.waiting import wait_until_blocking

ROOT = Path(__file__).resolve().parents[2]


def run_main(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "LEDGERCHAT_")) and "API_KEY" not in k}
    return subprocess.run(
        [sys.executable, str(ROOT / "main.py"), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**clean, **(env or {})},
    )


@pytest.mark.parametrize(
    ("args", "env", "needle"),
    [
        (["--port", "99999"], {}, "--port: 99999"),
        (["--port", "eighty"], {}, "--port: 'eighty' is not a valid int"),
        (["--leave-policy", "explode"], {}, "--leave-policy: 'explode'"),
        (["--host", "my laptop"], {}, "--host: 'my laptop'"),
        (["--idle-timeout", "0"], {}, "--idle-timeout"),
        (["--api-base", "ftp://x"], {}, "--api-base"),
        ([], {"LEDGERCHAT_MAX_RESENDS": "9"}, "--max-resends: 9"),
    ],
)
def test_a_bad_setting_is_named_in_one_line(args: list[str], env: dict[str, str], needle: str) -> None:
    with pytest.raises(ConfigError, match=needle.replace("(", r"\(")):
        load_config(args, env)


def test_command_line_wins_over_environment() -> None:
    config = load_config(["--port", "9001"], {"LEDGERCHAT_PORT": "9002", "LEDGERCHAT_LEAVE_POLICY": "cancel"})
    assert (config.port, config.leave_policy, config.host, config.model) == (9001, "cancel", "127.0.0.1", "demo")


def test_an_unknown_model_stops_start_up_with_a_readable_line() -> None:
    result = run_cli("--model", "no-such-model-xyz", "--port", "18099")
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert "--model: 'no-such-model-xyz' is not a model litellm can route" in line


def test_a_missing_provider_key_stops_start_up_naming_the_variable() -> None:
    result = run_cli("--model", "openai/gpt-4o-mini", "--port", "18098")
    assert result.returncode == 2
    assert "OPENAI_API_KEY" in result.stderr and "Traceback" not in result.stderr


def test_export_writes_one_design_named_event_per_line(tmp_path: Path) -> None:
    store = Store.open(tmp_path)
    written = [store.append(e) for e in conversation_events("c1", 2, 5) + conversation_events("c2", 1, 3)]
    store.close()
    result = run_cli("export", "--data-dir", str(tmp_path), "--conversation", "c1")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [from_dict(json.loads(line)) for line in lines] == [e for e in written if e.conversation_id == "c1"]
    first = json.loads(lines[0])
    assert list(first)[:4] == ["seq", "ts", "kind", "conversation_id"]
    everything = run_cli("export", "--data-dir", str(tmp_path))
    assert len(everything.stdout.splitlines()) == len(written)
    missing = run_cli("export", "--data-dir", str(tmp_path), "--conversation", "nope")
    assert missing.returncode == 1 and "no conversation nope" in missing.stderr


def test_export_reads_a_damaged_file_without_changing_anything(tmp_path: Path) -> None:
    store = Store.open(tmp_path)
    [store.append(e) for e in conversation_events("c1", 1, 5)]
    store.close()
    path = tmp_path / "conv-c1.json"
    path.write_bytes(path.read_bytes()[:-40])
    before = sorted(p.name for p in tmp_path.iterdir())
    result = run_main("export", "--data-dir", str(tmp_path))
    assert result.returncode == 0 and "damaged" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("not json", "is not valid JSON"),
        ('{"servers": {}}', 'expected an object {"mcpServers"'),
        ('{"mcpServers": {"x": {"command": "a", "url": "http://b"}}}', "server 'x': give either 'command'"),
        ('{"mcpServers": {"x": {"command": "a", "confirm": "yes"}}}', "server 'x': 'confirm' must be true or false"),
        (
            '{"mcpServers": {"x": {"command": "a", "approval": {"*": "sometimes"}}}}',
            "server 'x': approval for '*' must be one of run, ask, once, never (got 'sometimes')",
        ),
        (
            '{"mcpServers": {"x": {"command": "a", "approval": 5}}}',
            "server 'x': 'approval' must be a mode or an object",
        ),
    ],
)
def test_a_broken_tools_file_stops_start_up_with_one_line_naming_the_problem(
    tmp_path: Path, content: str, needle: str
) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(content)
    result = run_cli("--mcp-config", str(config), "--port", "18098")
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert needle in line and line.startswith("ledger-chat: --mcp-config")


def test_export_of_a_missing_data_dir_exits_non_zero_with_a_message(tmp_path: Path) -> None:
    result = run_cli("export", "--data-dir", str(tmp_path / "nowhere"))
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.strip() == f"ledger-chat: no data folder at {tmp_path / 'nowhere'} (--data-dir)"
    assert not (tmp_path / "nowhere").exists()


def test_export_writes_valid_utf8_for_lone_surrogates_in_any_field(tmp_path: Path) -> None:
    half = "half an emoji \ud83d"
    store = Store.open(tmp_path)
    events = conversation_events("c1", 1, 2)
    written = [store.append(e) for e in events[:-2]]
    written.append(store.append(replace(events[-2], finish_reason=half)))
    written.append(store.append(Renamed(conversation_id="c1", ts=half, title=half)))
    written.append(
        store.append(
            Failed(
                conversation_id="c1", ts="", attempt_id=half, request_id=None, error_type="server",
                summary=half, retryable=False, will_retry=False,
            )
        )
    )  # fmt: skip
    store.close()
    result = subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "export", "--data-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode("utf-8").splitlines()  # strict: raises on anything that is not UTF-8
    assert [from_dict(json.loads(line)) for line in lines] == written
    assert all(line.encode("utf-8") for line in to_jsonl(written))


def test_a_port_in_use_is_named_before_any_line_says_where_the_app_listens(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as holder:
        port = holder.getsockname()[1]
        result = run_main("--port", str(port), "--data-dir", str(tmp_path))
    assert result.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}: another program is using it" in result.stderr
    assert "http://" not in result.stdout and "http://" not in result.stderr.split("cannot listen")[0]


def test_stopping_the_tasks_py_app_wrapper_stops_the_app(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "LEDGERCHAT_")) and "API_KEY" not in k}
    wrapper = subprocess.Popen(
        [sys.executable, str(ROOT / "tasks.py"), "app", "--port", str(port), "--data-dir", str(tmp_path)],
        cwd=ROOT,
        env=clean,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until_blocking(lambda: serving(port), timeout=90, what="the app to listen")
        wrapper.send_signal(signal.SIGTERM)
        wrapper.wait(timeout=30)
        wait_until_blocking(lambda: not serving(port), timeout=30, what="the app to stop listening")
    finally:
        if wrapper.poll() is None:
            wrapper.kill()


def serving(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False
