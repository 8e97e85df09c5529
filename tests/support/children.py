"""A test's child process: ``python -m tests.support.<module> ARGS`` with the repository on its path, its first
line of output awaited, killed on the way out if it still runs.

Guarantees: ``child_saying(module, args, prefix, within)`` yields the running child and its first line once that
line starts with ``prefix``; no line within ``within`` seconds, or another line, fails the test naming what came.
The caller kills the child where its scenario says; the child is killed anyway when the block ends.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def child_saying(
    module: str, args: list[str], prefix: str, within: float
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    child = subprocess.Popen(
        [sys.executable, "-m", f"tests.support.{module}", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert child.stdout is not None
        ready, _, _ = select.select([child.stdout], [], [], within)
        line = child.stdout.readline() if ready else f"(nothing within {within:g} s)"
        assert line.startswith(prefix), f"the child {module} did not say {prefix!r}: {line!r}"
        yield child, line
    finally:
        if child.poll() is None:
            child.kill()
