"""The test side of the fork server (``tests.support.zygote``): one warm server per test process, and a
``Popen``-like handle for each app it forks.

Guarantees:
- ``start_app(args, env, cwd, log)`` returns a ``ForkedProcess`` (``pid``, ``returncode``, ``poll``, ``wait``,
  ``kill``, ``terminate``, ``send_signal``: what the tests use of ``subprocess.Popen``) for ``python main.py ARGS``
  forked from the warm server, or None when there is no server (it could not start, or
  ``LEDGERCHAT_TEST_NO_FORK`` is set): the caller then starts the app the ordinary way.
- The server is started once, on first use, by whichever thread gets there first (the others wait for it), with the
  environment the apps get; it ends with the test process.
- ``wait`` is a condition wait on the child's exit code (as the server reaped it), with ``Popen``'s timeout error.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_lock = threading.Lock()
_server: tuple[subprocess.Popen[bytes], str] | None = None
_failed = False


def _ask(path: str, request: dict) -> dict:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(30)
        conn.connect(path)
        conn.sendall(json.dumps(request).encode() + b"\n")
        return dict(json.loads(conn.makefile("rb").readline()))


def _started(env: dict[str, str]) -> str | None:
    """The socket of the warm server, started on first use; None if there is none."""
    global _server, _failed
    with _lock:
        if _server is not None and _server[0].poll() is None:
            return _server[1]
        if _failed or os.environ.get("LEDGERCHAT_TEST_NO_FORK"):
            return None
        folder = tempfile.mkdtemp(prefix="lc-zygote-")
        path, log = os.path.join(folder, "socket"), Path(folder) / "zygote.log"
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.zygote", path],
            cwd=ROOT,
            env=env,
            stdout=log.open("ab"),
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None:
            if "zygote ready" in log.read_text(errors="replace"):
                _server = (proc, path)
                return path
            time.sleep(0.1)  # the poll interval of a condition wait (the ready line), not a sync sleep
        proc.kill()
        _failed = True
        print(f"the fork server did not start; apps start the ordinary way: {log.read_text()[-1000:]}")
        return None


def start_app(args: list[str], env: dict[str, str], cwd: Path, log: Path) -> ForkedProcess | None:
    path = _started(env)
    if path is None:
        return None
    answer = _ask(path, {"run": args, "env": env, "cwd": str(cwd), "log": str(log)})
    return ForkedProcess(int(answer["pid"]), path)


class ForkedProcess:
    """What the tests use of ``subprocess.Popen``, for an app forked by the server."""

    def __init__(self, pid: int, server: str) -> None:
        self.pid, self.server = pid, server
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                code = _ask(self.server, {"status": self.pid}).get("code")
            except OSError:  # the server is gone (the test process is ending): is the child?
                code = None if os.path.exists(f"/proc/{self.pid}") else -signal.SIGKILL
            self.returncode = None if code is None else int(code)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"app {self.pid}", timeout or 0)
            time.sleep(0.02)  # the poll interval of a condition wait (the exit code), not a sync sleep
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)
