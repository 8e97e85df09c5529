"""Real file systems that misbehave, for tests: a small tmpfs that fills up, and one remounted read-only.

Both need ``mount`` (the tests run as root, where chmod stops nothing); where mounting is not permitted the test
is skipped with the reason, which fails it unless the run knowingly allows it (``tests/support/skips.py``;
``tasks.py test`` checks up front that a tmpfs can be mounted). Every mount is undone when the context ends, even
after a failure.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")


def _mount(*args: str) -> None:
    result = subprocess.run(["mount", *args], capture_output=True, text=True, timeout=30)
    if result.returncode != 0:
        raise OSError(result.stderr.strip() or f"mount {' '.join(args)} failed")


@contextlib.contextmanager
def small_disk(folder: Path, size_kb: int) -> Iterator[Path]:
    """``folder`` as a tmpfs of ``size_kb`` KiB: writes past that fail with ENOSPC, as on a full disk."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        _mount("-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(folder))
    except OSError as exc:
        pytest.skip(f"cannot mount a small tmpfs here: {exc}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True, timeout=30)


@contextlib.contextmanager
def read_only_folder(folder: Path, prepare: Callable[[Path], T]) -> Iterator[tuple[Path, T]]:
    """A tmpfs at ``folder``, filled by ``prepare(folder)``, then remounted read-only (EROFS even for root)."""
    with small_disk(folder, 4096):
        value = prepare(folder)
        _mount("-o", "remount,ro", str(folder))
        yield folder, value


def fill(folder: Path, name: str = "filler.bin") -> Path:
    """Write zeros into ``folder/name`` until the disk is full; returns the file (delete it to free the space)."""
    path = folder / name
    block = b"\0" * 4096
    with open(path, "wb", buffering=0) as handle, contextlib.suppress(OSError):
        while True:
            handle.write(block)
    with contextlib.suppress(OSError), open(path, "ab", buffering=0) as handle:
        while True:
            handle.write(b"\0")
    os.sync()
    return path
