"""Spend limits in one JSON file beside the TinyDB ledger (``<data-dir>/spend_limits.json``).

Guarantees (beyond ``store.limits.api.LimitStore``): every write replaces the file whole (a temporary file, then
``os.replace``), so a crash leaves the old or the new limits, never half; a missing file is no limits; a file that
is not what this module writes is read as no limits (logged) and replaced on the next write.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path

from ledger.errors import StoreError
from store.limits.api import SpendLimit

log = logging.getLogger("ledger_chat.limits")


class FileLimits:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def limits(self) -> dict[str, SpendLimit]:
        with self._lock:
            return self._read()

    def put(self, key: str, limit: SpendLimit) -> None:
        with self._lock:
            limits = self._read()
            limits[key] = limit
            self._write(limits)

    def remove(self, key: str) -> bool:
        with self._lock:
            limits = self._read()
            if limits.pop(key, None) is None:
                return False
            self._write(limits)
            return True

    def _read(self) -> dict[str, SpendLimit]:
        try:
            rows = json.loads(self.path.read_text(encoding="utf-8"))
            return {str(key): SpendLimit.from_dict(value) for key, value in rows.items()}
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, TypeError, AttributeError) as exc:
            log.warning("%s is not a spend limits file (%s): read as no limits", self.path, exc)
            return {}

    def _write(self, limits: dict[str, SpendLimit]) -> None:
        rows = {key: limit.as_dict() for key, limit in sorted(limits.items())}
        temporary = self.path.with_name(f".{self.path.name}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary.write_text(json.dumps(rows, indent=1), encoding="utf-8")
            os.replace(temporary, self.path)
        except OSError as exc:
            raise StoreError(f"cannot save the spend limits to {self.path}: {exc.strerror or exc}") from None
