#!/usr/bin/env python3
"""Ledger Chat's set-up commands; needs only Python 3.11 (standard library) and is safe to re-run.

    python3.11 tasks.py app [main.py options]   # the app (offline demo model) on http://127.0.0.1:8080; it becomes
                                                # the app: Ctrl+C or a kill stops the app itself
    python3.11 tasks.py app acp [options]       # the editor's agent (ACP) on stdin/stdout: set-up words on stderr
    python3.11 tasks.py test [--allow-skip] [pytest options]
                                                # lint, types, and every test (installs Chromium for the browser suite)
                                                # (no options: two workers, then the fault timings alone)
    python3.11 tasks.py utilities-css           # re-make ui/static/utilities.css after adding a class in ui/

Each makes (or reuses) .venv beside this file and installs the dependencies listed in pyproject.toml when they
changed; the browser suite's Debian packages (chromium, chromium-driver) and the PostgreSQL tests' (postgresql) are
installed with apt-get when missing.

``test`` runs every test or fails: when Chromium, PostgreSQL's server binaries or a tmpfs mount (the full-disk and
read-only-folder tests) cannot be had here, it stops before anything runs with a sentence naming what is missing.
``--allow-skip`` is for a developer who knowingly runs part of the suite: the tests needing what is missing are
then skipped, and pytest's ``-rs`` lines say so (tests/support/skips.py lists every skip a run may show). pytest
always runs with ``-rs`` (every skip's reason) and ``--durations=25`` (the slowest 25); a test that hangs fails
after pyproject's ``timeout`` with every thread's stack (pytest-timeout).
"""

from __future__ import annotations

import glob
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
PYTHON = VENV / "bin" / "python"
PYTEST_ALWAYS = ["-rs", "--durations=25"]  # every skip's reason and the 25 slowest, on every run
SOLO_LIST = "LC_TEST_SOLO_LIST"  # where the first phase writes the files of the solo tests (tests/conftest.py)
ALLOW_SKIP = "LC_TEST_ALLOW_SKIP"  # read by tests/support/skips.py: the prerequisites a run may knowingly lack


def main(argv: list[str]) -> int:
    if sys.version_info < (3, 11):  # noqa: UP036 - this file must explain itself on an older Python
        print("Ledger Chat needs Python 3.11 or newer", file=sys.stderr)
        return 2
    if not argv or argv[0] not in ("app", "test", "utilities-css"):
        print(__doc__)
        return 2
    command, rest = argv[0], argv[1:]
    if command == "app":  # the app replaces this process: a signal to it (Ctrl+C, kill) reaches the app itself
        ensure_venv(extras=(), quiet=rest[:1] == ["acp"])  # ``app acp``: stdout is the editor's protocol alone
        os.chdir(ROOT)
        os.execv(PYTHON, [str(PYTHON), str(ROOT / "main.py"), *rest])
    allow_skip = "--allow-skip" in rest
    rest = [arg for arg in rest if arg != "--allow-skip"]
    ensure_venv(extras=("test",))
    if command == "utilities-css":  # Tailwind's browser build in Chromium: tests/support/utilities_css.py
        missing = ensure_chromium()
        if missing:
            print(f"tasks.py utilities-css needs Chromium: {missing}", file=sys.stderr)
            return 2
        return run([str(PYTHON), "-m", "tests.support.utilities_css"])
    missing_all = [m for m in (ensure_chromium(), ensure_postgresql(), tmpfs_mount_missing()) if m]
    env = None
    if missing_all and not allow_skip:
        print(not_every_test(missing_all), file=sys.stderr, flush=True)
        return 2
    if allow_skip:
        env = {**os.environ, ALLOW_SKIP: "chromium,postgresql,tmpfs"}
        for missing in missing_all:
            print(f"--allow-skip: the tests that need it will be skipped: {missing}", flush=True)
    for step in (
        [str(PYTHON), "-m", "ruff", "check", "."],
        [str(PYTHON), "-m", "mypy"],
    ):
        if run(step) != 0:
            return 1
    pytest = [str(PYTHON), "-m", "pytest", *PYTEST_ALWAYS]
    if rest:  # the tests asked for, as asked
        return run([*pytest, *rest], env=env)
    # three workers, a module each at a time (module fixtures start apps), in the order tests/conftest.py gives
    # (four took as long: 14:12 against 13:57 at one commit, both cores busy either way): the module marked early
    # (two minutes of fault scenarios, mostly waiting) takes one worker while the others share the rest, then the
    # modules that start apps (the last ones to finish are short); then the timings a promise depends on, alone,
    # collected from the files that hold them (the first phase lists them: tests/conftest.py ``pytest_deselected``;
    # all files if it listed none)
    with tempfile.TemporaryDirectory() as scratch:
        listed = Path(scratch) / "solo.txt"
        first = {**(env or os.environ), SOLO_LIST: str(listed)}
        code = run([*pytest, "-n", "3", "--dist", "loadfile", "--no-loadscope-reorder", "-m", "not solo"], env=first)
        files = sorted(set(listed.read_text().splitlines())) if listed.exists() else []
    solo = run([*pytest, "-m", "solo", *files], env=env)
    return code or solo


def not_every_test(missing: list[str]) -> str:
    """The sentence ``tasks.py test`` stops with when some tests could not run here."""
    lines = "\n".join(f"  - {m}" for m in missing)
    return (
        "tasks.py test runs every test, and some cannot run on this machine:\n"
        f"{lines}\n"
        "Install what is missing (tasks.py does it itself when run as root with apt-get), or run "
        "`python3.11 tasks.py test --allow-skip` to run the rest knowingly (the skipped tests are listed)."
    )


def ensure_venv(extras: tuple[str, ...], quiet: bool = False) -> None:
    """Make or update .venv; ``quiet``: every word of it (and of pip) on stderr, stdout left untouched."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = list(project["dependencies"])
    for extra in extras:
        wanted += project["optional-dependencies"][extra]
    key = hashlib.sha256("\n".join(wanted).encode()).hexdigest()
    stamp = VENV / ".installed"
    done = set(stamp.read_text().split()) if stamp.exists() else set()
    say = sys.stderr if quiet else sys.stdout
    if not PYTHON.exists():
        print(f"creating {VENV}", flush=True, file=say)
        venv.create(VENV, with_pip=True)
    if key in done:
        return
    print("installing dependencies into .venv", flush=True, file=say)
    check([str(PYTHON), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *wanted], quiet=quiet)
    stamp.write_text("\n".join(done | {key}))


def apt_usable() -> bool:
    return os.geteuid() == 0 and shutil.which("apt-get") is not None


def apt_install(*packages: str) -> str | None:
    """``apt-get install`` of Debian ``packages``; None when it worked, else what failed (for a sentence)."""
    names = " ".join(p for p in packages if not p.startswith("-"))
    print(f"installing {names} with apt-get", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", *packages]):
        print("+", " ".join(cmd), flush=True)
        if subprocess.call(cmd, cwd=ROOT, env=env) != 0:
            return f"`{' '.join(cmd)}` failed (see its output above)"
    return None


def ensure_chromium() -> str | None:
    """Debian's Chromium for the browser suite (Playwright drives its headless shell, the lighter old headless mode,
    when there is one, else Chromium itself; chromedriver comes along, unused by the tests): installed when missing
    and apt-get is usable; else the sentence saying what is missing."""
    if shutil.which("chromium") and shutil.which("chromedriver") and shutil.which("chromium-headless-shell"):
        return None
    if not apt_usable():
        if shutil.which("chromium"):
            return None  # chromedriver alone is missing: Playwright drives Chromium without it
        why = "not running as root" if os.geteuid() != 0 else "apt-get is not on PATH"
        return (
            "Chromium is missing (no `chromium` on PATH) and cannot be installed here "
            f"({why}): the browser tests need Debian's chromium package"
        )
    failed = apt_install("chromium", "chromium-driver", "chromium-headless-shell")
    if shutil.which("chromium"):
        return None  # (chromedriver may still be missing: the tests do not use it)
    return f"Chromium is missing (no `chromium` on PATH) and {failed or 'installing it did not provide it'}"


def ensure_postgresql() -> str | None:
    """Debian's PostgreSQL server binaries, for the tests that start a throwaway cluster (initdb, pg_ctl):
    installed when missing and apt-get is usable; else the sentence saying what is missing."""
    if not glob.glob("/usr/lib/postgresql/*/bin/initdb"):
        if not apt_usable():
            why = "not running as root" if os.geteuid() != 0 else "apt-get is not on PATH"
            return (
                "PostgreSQL's server binaries are missing (no /usr/lib/postgresql/*/bin/initdb) and cannot be "
                f"installed here ({why}): the PostgreSQL tests need Debian's postgresql package"
            )
        failed = apt_install("--no-install-recommends", "postgresql")
        if failed or not glob.glob("/usr/lib/postgresql/*/bin/initdb"):
            return (
                f"PostgreSQL's server binaries are missing and {failed or 'installing postgresql did not provide them'}"
            )
    if os.geteuid() == 0:
        import pwd

        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return (
                "PostgreSQL cannot be run here: as root the tests run the server as the 'postgres' OS user, and "
                "there is none (Debian's postgresql package creates it)"
            )
    return None


def tmpfs_mount_missing() -> str | None:
    """None when a small tmpfs can be mounted here, as tests/support/folders.py does for the full-disk and
    read-only-folder tests (a 64 KiB one, in a temp dir, unmounted at once); else the sentence saying why not."""
    mount, umount = shutil.which("mount"), shutil.which("umount")
    if mount is None or umount is None:
        return (
            "a tmpfs cannot be mounted here (no `mount`/`umount` on PATH): the full-disk and read-only tests need one"
        )
    with tempfile.TemporaryDirectory(prefix="ledgerchat-tmpfs-check-") as folder:
        tried = subprocess.run(
            [mount, "-t", "tmpfs", "-o", "size=64k", "tmpfs", folder], capture_output=True, text=True, timeout=30
        )
        if tried.returncode != 0:
            said = (tried.stderr.strip().splitlines() or [f"exit status {tried.returncode}"])[0]
            return (
                f"a tmpfs cannot be mounted here ({said}): the full-disk and read-only-folder tests mount small "
                "ones (run as root, in a container allowed to mount)"
            )
        subprocess.run([umount, folder], capture_output=True, timeout=30)
    return None


def run(cmd: list[str], env: dict[str, str] | None = None) -> int:
    print("+", " ".join(cmd), flush=True)
    return subprocess.call(cmd, cwd=ROOT, env=env)


def check(cmd: list[str], env: dict[str, str] | None = None, quiet: bool = False) -> None:
    print("+", " ".join(cmd), flush=True, file=sys.stderr if quiet else sys.stdout)
    subprocess.check_call(cmd, cwd=ROOT, env=env, stdout=sys.stderr if quiet else None)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
