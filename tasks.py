#!/usr/bin/env python3
"""Ledger Chat's set-up commands; needs only Python 3.11 (standard library) and is safe to re-run.

    python3.11 tasks.py app [main.py options]   # the app (offline demo model) on http://127.0.0.1:8080; it becomes
                                                # the app: Ctrl+C or a kill stops the app itself
    python3.11 tasks.py test [pytest options]   # lint, types, and every test (installs Chromium for the browser suite)
                                                # (no options: two workers, then the fault timings alone)
    python3.11 tasks.py utilities-css           # re-make ui/static/utilities.css after adding a class in ui/

Each makes (or reuses) .venv beside this file and installs the dependencies listed in pyproject.toml when they
changed; the browser suite's Debian packages (chromium, chromium-driver) and the PostgreSQL tests' (postgresql) are
installed with apt-get when missing.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
PYTHON = VENV / "bin" / "python"


def main(argv: list[str]) -> int:
    if sys.version_info < (3, 11):  # noqa: UP036 - this file must explain itself on an older Python
        print("Ledger Chat needs Python 3.11 or newer", file=sys.stderr)
        return 2
    if not argv or argv[0] not in ("app", "test", "utilities-css"):
        print(__doc__)
        return 2
    command, rest = argv[0], argv[1:]
    if command == "app":  # the app replaces this process: a signal to it (Ctrl+C, kill) reaches the app itself
        ensure_venv(extras=())
        os.chdir(ROOT)
        os.execv(PYTHON, [str(PYTHON), str(ROOT / "main.py"), *rest])
    ensure_venv(extras=("test",))
    ensure_chromium()
    if command == "utilities-css":  # Tailwind's browser build in Chromium: tests/support/utilities_css.py
        return run([str(PYTHON), "-m", "tests.support.utilities_css"])
    ensure_postgresql()
    for step in (
        [str(PYTHON), "-m", "ruff", "check", "."],
        [str(PYTHON), "-m", "mypy"],
    ):
        if run(step) != 0:
            return 1
    if rest:  # the tests asked for, as asked
        return run([str(PYTHON), "-m", "pytest", *rest])
    # two workers, a module each at a time (module fixtures start apps); then the fault timings, alone
    code = run([str(PYTHON), "-m", "pytest", "-n", "2", "--dist", "loadfile", "-m", "not solo"])
    solo = run([str(PYTHON), "-m", "pytest", "-m", "solo"])
    return code or solo


def ensure_venv(extras: tuple[str, ...]) -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = list(project["dependencies"])
    for extra in extras:
        wanted += project["optional-dependencies"][extra]
    key = hashlib.sha256("\n".join(wanted).encode()).hexdigest()
    stamp = VENV / ".installed"
    done = set(stamp.read_text().split()) if stamp.exists() else set()
    if not PYTHON.exists():
        print(f"creating {VENV}", flush=True)
        venv.create(VENV, with_pip=True)
    if key in done:
        return
    print("installing dependencies into .venv", flush=True)
    check([str(PYTHON), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *wanted])
    stamp.write_text("\n".join(done | {key}))


def ensure_chromium() -> None:
    if shutil.which("chromium") and shutil.which("chromedriver"):
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        print("chromium/chromium-driver missing and apt-get is not usable here: the browser suite will be skipped")
        return
    print("installing chromium and chromium-driver with apt-get", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    check(["apt-get", "update", "-q"], env=env)
    check(["apt-get", "install", "-y", "-q", "chromium", "chromium-driver"], env=env)


def ensure_postgresql() -> None:
    """Debian's PostgreSQL server binaries, for the tests that start a throwaway cluster (initdb, pg_ctl)."""
    import glob

    if glob.glob("/usr/lib/postgresql/*/bin/initdb"):
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        print("postgresql missing and apt-get is not usable here: the PostgreSQL tests will be skipped")
        return
    print("installing postgresql with apt-get", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    check(["apt-get", "update", "-q"], env=env)
    check(["apt-get", "install", "-y", "-q", "--no-install-recommends", "postgresql"], env=env)


def run(cmd: list[str]) -> int:
    print("+", " ".join(cmd), flush=True)
    return subprocess.call(cmd, cwd=ROOT)


def check(cmd: list[str], env: dict[str, str] | None = None) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.check_call(cmd, cwd=ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
