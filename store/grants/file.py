"""Server grants in one JSON file beside the TinyDB ledger (``<data-dir>/approval_grants.json``).

Guarantees (beyond ``store.grants.api.GrantStore``): every write replaces the file whole (a temporary file, then
``os.replace``), so a crash leaves the old or the new grants, never half; a missing file is no grants; a file that
is not what this module writes is read as no grants (logged) and replaced on the next write.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path

from ledger.errors import StoreError
from store.grants.api import Grant

log = logging.getLogger("ledger_chat.grants")


class FileGrants:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def grants(self) -> dict[str, Grant]:
        with self._lock:
            return self._read()

    def grant(self, grant: Grant) -> None:
        with self._lock:
            grants = self._read()
            grants[grant.key] = grant
            self._write(grants)

    def revoke(self, key: str) -> bool:
        with self._lock:
            grants = self._read()
            if grants.pop(key, None) is None:
                return False
            self._write(grants)
            return True

    def _read(self) -> dict[str, Grant]:
        try:
            rows = json.loads(self.path.read_text(encoding="utf-8"))
            return {r["key"]: Grant(key=r["key"], grant_hash=r["grant_hash"], granted_ts=r["granted_ts"]) for r in rows}
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, TypeError, KeyError) as exc:
            log.warning("%s is not a grants file (%s): read as no grants", self.path, exc)
            return {}

    def _write(self, grants: dict[str, Grant]) -> None:
        rows = [{"key": g.key, "grant_hash": g.grant_hash, "granted_ts": g.granted_ts} for g in grants.values()]
        temporary = self.path.with_name(f".{self.path.name}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary.write_text(json.dumps(rows, indent=1), encoding="utf-8")
            os.replace(temporary, self.path)
        except OSError as exc:
            raise StoreError(f"cannot save the tool grants to {self.path}: {exc.strerror or exc}") from None
