"""A fork server for the tests' app processes: the heavy imports (litellm, NiceGUI, the app) are paid once per test
worker, and every ``python main.py …`` the tests start is a fork of that warm process instead of a cold start.

Guarantees:
- The server (``python -m tests.support.zygote SOCKET``) imports what ``main.py`` needs with litellm told to stay
  offline, checks that it runs no thread (a fork of a threaded process is unsafe: then it refuses to start and the
  tests start apps the ordinary way), and answers one JSON request per connection on a Unix socket:
  ``{"run": [args], "env": {...}, "cwd": dir, "log": file}`` forks a child that runs ``main.py`` as ``__main__``
  with exactly those arguments, environment and working folder, its output appended to ``log``, in a session of
  its own, and answers ``{"pid": n}``; ``{"status": pid}`` answers ``{"code": n | null}`` (null while it runs).
- A child is the app as the command line would run it: ``main.py`` is executed afresh (``runpy``), the environment
  is replaced, ``random`` is re-seeded by Python's own fork hook, and the server's socket is closed in the child.
- Children are reaped as they end and their exit codes kept (a signal's as its negative number, as ``Popen`` says).
- The server ends when its parent (the test worker) is gone.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAIN = ROOT / "main.py"
codes: dict[int, int] = {}


def warm() -> None:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    import litellm  # noqa: F401
    import mcp  # noqa: F401
    import nicegui  # noqa: F401
    import opentelemetry.sdk.trace  # noqa: F401

    import app.cli  # noqa: F401
    import app.wiring  # noqa: F401


def reap(_signum: int = 0, _frame: object = None) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        codes[pid] = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def child(server: socket.socket, request: dict) -> None:
    """In the forked child: become ``python main.py ARGS`` and never return."""
    code = 1
    try:
        server.close()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.setsid()
        log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        os.close(null)
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        sys.argv = [str(MAIN), *request["run"]]
        import runpy

        runpy.run_path(str(MAIN), run_name="__main__")
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - said in the child's log, like an uncaught error of ``python main.py``
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def serve(path: str) -> None:
    warm()
    if threading.active_count() != 1:
        print(f"zygote: refusing to fork a process with threads: {threading.enumerate()}", file=sys.stderr)
        sys.exit(3)
    parent = os.getppid()
    signal.signal(signal.SIGCHLD, reap)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(16)
    server.settimeout(2.0)
    print("zygote ready", flush=True)
    while os.getppid() == parent:
        try:
            conn, _ = server.accept()
        except TimeoutError:
            continue
        with conn:
            conn.settimeout(10)
            request = json.loads(conn.makefile("rb").readline())
            if "status" in request:
                reap()
                answer = {"code": codes.get(int(request["status"]))}
            else:
                pid = os.fork()
                if pid == 0:
                    conn.close()
                    child(server, request)
                answer = {"pid": pid}
            conn.sendall(json.dumps(answer).encode() + b"\n")
    server.close()


if __name__ == "__main__":
    serve(sys.argv[1])
