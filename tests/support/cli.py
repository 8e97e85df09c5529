"""The command line's commands that do not serve (``users``, ``export``, ``migrate``) run in the test's process.

``run_cli(*args)`` calls ``app.cli.main`` with the arguments as ``python main.py`` would, with stdout and stderr
captured (stdout has a ``buffer``: export writes bytes), ``input`` as its standard input, and an environment
without ``LEDGERCHAT_*``, ``PYTEST_*``, keys or NiceGUI's simulation flag, as ``tests.app.test_cli.run_main`` gives
the real process. It returns what a subprocess would: the exit code and both texts. A fresh interpreter costs about
two seconds (litellm's import); the tests that are about the process itself (exit codes at start-up, signals, a busy
port) keep running it. Not for two threads at once (standard streams and the environment are the process's).
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
from unittest import mock

from app.cli import main

__all__ = ["run_cli"]


def run_cli(
    *args: str, env: dict[str, str] | None = None, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``python main.py *args`` in this process: (exit code, stdout, stderr) as a ``CompletedProcess``; ``input``
    is what its standard input holds (a password for ``--password-stdin``)."""
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_", "LEDGERCHAT_")) and "API_KEY" not in k and k != "NICEGUI_USER_SIMULATION"
    }
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    err = io.StringIO()
    environ = mock.patch.dict(os.environ, {**clean, **(env or {})}, clear=True)
    stdin = mock.patch("sys.stdin", io.StringIO(input or ""))
    with environ, stdin, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's --help and usage errors
            code = exc.code if isinstance(exc.code, int) else 1
    out.flush()
    stdout = out.buffer.getvalue().decode("utf-8")
    return subprocess.CompletedProcess(["main.py", *args], code or 0, stdout, err.getvalue())
