"""File-level safety for TinyDB: atomic writes, an in-memory copy, and salvage of damaged files.

Guarantees:
- ``AtomicJSONStorage.write`` never leaves a half-written file: it writes a temp file in the same folder,
  fsyncs it, renames it over the old one and fsyncs the folder. A failed write leaves the previous file intact.
- ``read`` parses the file once; later reads return the in-memory copy (this storage is the only writer), which
  only a successful write changes.
- ``salvage`` reads every complete document of a truncated TinyDB file, in order, and never raises.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import orjson
from tinydb.storages import Storage

_DECODER = json.JSONDecoder()
_TABLE_START = re.compile(r'\s*\{\s*"(?P<table>[^"]+)"\s*:\s*\{')


class AtomicJSONStorage(Storage):
    """A TinyDB storage that keeps the data in memory and replaces the file atomically on every write."""

    def __init__(self, path: str | os.PathLike[str], data: dict[str, Any] | None = None) -> None:
        self.path = Path(path)
        self._data = data
        self.bytes_written = 0

    def read(self) -> dict[str, Any] | None:
        if self._data is None and self.path.exists():
            text = self.path.read_text(encoding="utf-8")
            self._data = loads(text) if text.strip() else None
        # TinyDB replaces the table inside what it reads, then writes it: hand out a shallow copy, so that a
        # write that fails leaves the cached data as it was on disk (a retry must not insert twice).
        return dict(self._data) if self._data is not None else None

    def write(self, data: dict[str, Any]) -> None:
        payload = dumps(data)
        atomic_write(self.path, payload)
        self._data = data
        self.bytes_written = len(payload)

    def close(self) -> None:
        self._data = None


def dumps(data: Any) -> bytes:
    """Compact JSON; orjson is ~10x faster than ``json`` (a flush rewrites the whole conversation file)."""
    try:
        return orjson.dumps(data)
    except TypeError:  # e.g. a lone surrogate from a browser: keep it, escaped, rather than lose the write
        return json.dumps(data, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def loads(text: str | bytes) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)  # what ``dumps`` wrote through its fallback, or a real error for the caller


def atomic_write(path: Path, payload: bytes) -> None:
    """Replace ``path`` with ``payload`` so that a reader sees either the old or the new file, never a mix."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def salvage(text: str) -> tuple[str | None, list[dict[str, Any]]]:
    """The table name and every complete document before the first damage in a TinyDB JSON text."""
    match = _TABLE_START.match(text)
    if match is None:
        return None, []
    docs: list[dict[str, Any]] = []
    pos = match.end()
    while True:
        pos = _skip_space(text, pos)
        if pos >= len(text) or text[pos] == "}":
            break
        try:
            key, pos = _DECODER.raw_decode(text, pos)
            pos = _skip_space(text, pos)
            if not isinstance(key, str) or text[pos : pos + 1] != ":":
                break
            doc, pos = _DECODER.raw_decode(text, _skip_space(text, pos + 1))
        except (json.JSONDecodeError, IndexError, RecursionError):
            break
        if not isinstance(doc, dict):
            break
        docs.append(doc)
        pos = _skip_space(text, pos)
        if text[pos : pos + 1] == ",":
            pos += 1
    return match.group("table"), docs


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def fsync_dir(folder: Path) -> None:
    """Make a rename in ``folder`` durable (best effort: a file system that cannot is left as it is)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
