"""Where agent presets are kept: every version, append-only, beside the ledger (a JSON file in the TinyDB data dir,
the ``presets`` table on PostgreSQL: ``store.postgres.presets``; in memory for tests and ``--memory``).

Guarantees every implementation keeps (``tests/store/test_presets_store.py`` holds them to it):
- ``add`` stores one version; a version already stored for that preset id raises ``VersionTaken`` (two editors
  saving the same version: the second is told, nothing is overwritten). Versions are never changed or removed.
- ``versions`` gives every stored version, oldest first per preset, equal after a reopen.
- ``FilePresets`` writes the whole file atomically (a temp file in the same folder, fsync, rename, fsync of the
  folder, as the blob store does): a crash or a full disk leaves the old file or the new one, never half of one.
  A damaged file is not overwritten: reading it raises ``StoreError`` saying which file and why.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Protocol

from ledger.errors import StoreError
from ledger.presets import Preset, dumps, from_dict
from store.tinydb import fsync_dir


class VersionTaken(Exception):
    """That version of the preset was saved meanwhile (by another tab or instance)."""


class PresetStore(Protocol):
    def versions(self) -> list[Preset]: ...

    def add(self, preset: Preset) -> None: ...


class MemoryPresets:
    def __init__(self) -> None:
        self._rows: list[Preset] = []
        self._lock = threading.Lock()

    def versions(self) -> list[Preset]:
        with self._lock:
            return sorted(self._rows, key=lambda p: (p.preset_id, p.version))

    def add(self, preset: Preset) -> None:
        with self._lock:
            if any(p.key == preset.key for p in self._rows):
                raise VersionTaken(f"version {preset.version} of preset {preset.preset_id} exists already")
            self._rows.append(preset)


class FilePresets:
    """``<data-dir>/presets.json``: ``{"presets": [version, ...]}``, rewritten whole and atomically on each save
    (presets are few and small; saves are rare)."""

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        self.path, self.read_only = Path(path), read_only
        self._lock = threading.Lock()

    def versions(self) -> list[Preset]:
        with self._lock:
            return sorted(self._read(), key=lambda p: (p.preset_id, p.version))

    def add(self, preset: Preset) -> None:
        if self.read_only:
            raise PermissionError(f"the presets file {self.path} is open read-only")
        with self._lock:
            rows = self._read()
            if any(p.key == preset.key for p in rows):
                raise VersionTaken(f"version {preset.version} of preset {preset.preset_id} exists already")
            self._write([*rows, preset])

    def _read(self) -> list[Preset]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise StoreError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        try:
            data = json.loads(text)
            return [from_dict(row) for row in data["presets"]]
        except (ValueError, KeyError, TypeError) as exc:
            raise StoreError(f"{self.path} is damaged ({exc}); it was left as it is") from None

    def _write(self, rows: list[Preset]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = dumps(rows)
        temp = self.path.with_name(f".tmp-{self.path.name}-{threading.get_ident()}")
        try:
            with open(temp, "w", encoding="utf-8") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, self.path)
            fsync_dir(self.path.parent)
        except OSError as exc:
            temp.unlink(missing_ok=True)
            raise StoreError(f"cannot save {self.path}: {exc.strerror or exc}") from None
