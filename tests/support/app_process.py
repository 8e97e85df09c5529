"""Runs the real app (``python main.py``) as a subprocess for end-to-end tests and benchmarks: forked from a warm
process that has already imported litellm and NiceGUI (``tests.support.forked``) where it can be, else started cold.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.support.forked import ForkedProcess, start_app

ROOT = Path(__file__).resolve().parents[2]
READY_LINE = "Ledger Chat: the model client is loaded"  # app.wiring.READY_LINE (the app runs as a subprocess here)
FAKE_KEY = "sk-e2e-fake-key-0123456789abcdef"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class AppProcess:
    """``python main.py`` on a free port, against a given upstream, with its own data dir."""

    def __init__(
        self,
        data_dir: Path,
        api_base: str | None,
        *extra: str,
        module: str | None = None,
        host: str | None = None,
        cold: bool = False,
        env: dict[str, str] | None = None,
    ) -> None:
        """``api_base=None`` runs the built-in demo model; ``host`` is passed as ``--host`` (``url`` reaches it
        on loopback: 127.0.0.1 for 0.0.0.0, [::1] for ::1); ``cold`` starts it as a person does (never a fork of
        the warm process: litellm is imported at its start-up, as on a fresh clone); ``env`` is added to its
        environment."""
        self.data_dir, self.api_base, self.module, self.cold = data_dir, api_base, module, cold
        self.env = env or {}
        self.extra = (*extra, "--host", host) if host else extra
        self.port = free_port()
        local = {None: "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "[::1]"}.get(
            host, f"[{host}]" if host and ":" in host else host
        )
        self.url = f"http://{local}:{self.port}"
        self.proc: subprocess.Popen[bytes] | ForkedProcess | None = None
        self.log = data_dir.parent / f"app-{self.port}.log"

    def start(self, timeout: float = 120.0, *, loaded: bool = True) -> AppProcess:
        """Start and return once the app answers (and, with ``loaded``, once its background start-up printed that
        the model client is loaded: a test then never races litellm's import for the CPU)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "NICEGUI_", "LEDGERCHAT_"))}
        env.update(OPENAI_API_KEY=FAKE_KEY, PYTHONPATH=str(ROOT))
        env.update(self.env)
        if self.module:
            cmd = [sys.executable, "-m", self.module, str(self.port), str(self.api_base)]
        else:
            model = ["--model", "openai/test-model", "--api-base", self.api_base] if self.api_base else []
            cmd = [
                sys.executable,
                str(ROOT / "main.py"),
                "--port",
                str(self.port),
                "--data-dir",
                str(self.data_dir),
                *model,
                *(() if "--titles" in self.extra else ("--titles", "off")),  # a test asks for model titles
                *self.extra,
            ]
        forked = None if self.module or self.cold else start_app(cmd[2:], env, ROOT, self.log)  # a warm fork
        self.proc = forked or subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=self.log.open("ab"), stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"app exited with {self.proc.returncode}: {self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(self.url + "/", timeout=1) as response:
                    if response.status == 200 and self._ready(loaded):
                        return self
            except urllib.error.HTTPError as exc:
                if exc.code == 401 and self._ready(loaded):  # the front door answers: it asks for its token
                    return self
            except OSError:
                time.sleep(0.1)  # the poll interval of a condition wait (the app answering), not a sync sleep
        raise RuntimeError(f"app did not start in {timeout} s: {self.log.read_text()[-2000:]}")

    def _ready(self, loaded: bool) -> bool:
        if loaded and not self.module and READY_LINE not in self.log.read_text(errors="replace"):
            time.sleep(0.1)  # the poll interval of a condition wait (the line appearing), not a sync sleep
            return False
        return True

    @property
    def token(self) -> str:
        """The access token the app generated and printed in its start-up line."""
        found = re.search(r"\?token=([A-Za-z0-9_-]+)", self.log.read_text())
        assert found, "the start-up line shows no token"
        return found.group(1)

    @property
    def pid(self) -> int:
        """The running app's process id (to freeze it, or to read which instance wrote a row)."""
        assert self.proc is not None, "not started"
        return self.proc.pid

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)

    def ledger_options(self) -> list[str]:
        """Where this app keeps its ledger, as ``main.py export`` takes it: its database, or its data folder."""
        if "--database-url" in self.extra:
            return ["--database-url", self.extra[self.extra.index("--database-url") + 1]]
        return ["--data-dir", str(self.data_dir)]

    def export(self, conversation: str | None = None, *, having: str | None = None) -> list[dict]:
        """The ledger as ``main.py export`` prints it (read-only, so safe while the app runs); [] for a
        conversation it does not hold yet; any other failure of the command fails the test. The command runs in
        this process (``tests.support.cli.run_cli``). With ``having``, the first export holding an event of that
        kind, waited for up to 5 s: the app writes in batches, an urgent kind (``FLAGS``) at once but on its writer
        thread, another within the 250 ms interval."""
        import json

        from tests.support.cli import run_cli
        from tests.support.waiting import wait_until_blocking

        args = ["export", *self.ledger_options()]
        if conversation:
            args += ["--conversation", conversation]

        def read() -> list[dict]:
            done = run_cli(*args)
            assert done.returncode == 0 or "no conversation" in done.stderr, done.stderr  # not held yet: []
            return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]

        def holding() -> list[dict] | None:
            events = read()
            return events if any(e["kind"] == having for e in events) else None

        return read() if having is None else wait_until_blocking(holding, 5, f"{having} on disk")

    def stored_text(self, conversation: str) -> str:
        """The text of the conversation's chunks that have reached the disk or the database so far."""
        return "".join(e["text"] for e in self.export(conversation) if e["kind"] == "chunk")
