"""Remote tool servers and sealed tokens in two JSON files beside the TinyDB ledger (``<data-dir>/remote_servers.json``
and ``<data-dir>/oauth_tokens.json``, the latter 0600).

Guarantees (beyond ``store.tokens.api.RemoteStore``): every write replaces a file whole (a temporary file, then
``os.replace``), so a crash leaves the old or the new content, never half; a missing file is nothing stored; a
file that is not what this module writes is read as nothing stored (logged) and replaced on the next write. The
tokens file holds only ciphertext (base64 of what ``engine.tools.vault`` sealed).
"""

from __future__ import annotations

import base64
import json
import logging
import os
import threading
from pathlib import Path
from typing import Any

from ledger.errors import StoreError
from store.tokens.api import RemoteServer, of_server

log = logging.getLogger("ledger_chat.remote")


class FileRemote:
    def __init__(self, folder: Path) -> None:
        self.servers_path = folder / "remote_servers.json"
        self.tokens_path = folder / "oauth_tokens.json"
        self._lock = threading.Lock()

    def servers(self) -> list[RemoteServer]:
        with self._lock:
            return [RemoteServer(**row) for row in self._read(self.servers_path, [])]  # a file of before: defaults

    def stamp(self) -> str:
        """The servers file's identity and time (a change replaces the file: a new inode, a new time)."""
        try:
            found = self.servers_path.stat()
        except OSError:
            return ""
        return f"{found.st_ino}:{found.st_mtime_ns}:{found.st_size}"

    def put(self, server: RemoteServer) -> None:
        with self._lock:
            rows = [
                r for r in self._read(self.servers_path, []) if (r["owner"], r["name"]) != (server.owner, server.name)
            ]
            rows.append(_row(server))
            self._write(self.servers_path, rows)

    def remove(self, owner: str | None, name: str) -> bool:
        with self._lock:
            rows = self._read(self.servers_path, [])
            kept = [r for r in rows if (r["owner"], r["name"]) != (owner, name)]
            tokens = self._read(self.tokens_path, {})
            left = {k: v for k, v in tokens.items() if not of_server(k, owner, name)}
            if left != tokens:
                self._write(self.tokens_path, left)
            if len(kept) == len(rows):
                return False
            self._write(self.servers_path, kept)
            return True

    def sealed(self, key: str) -> bytes | None:
        with self._lock:
            value = self._read(self.tokens_path, {}).get(key)
            return base64.b64decode(value) if isinstance(value, str) else None

    def seal(self, key: str, value: bytes) -> None:
        with self._lock:
            tokens = self._read(self.tokens_path, {})
            tokens[key] = base64.b64encode(value).decode("ascii")
            self._write(self.tokens_path, tokens)

    def forget(self, key: str) -> bool:
        with self._lock:
            tokens = self._read(self.tokens_path, {})
            if tokens.pop(key, None) is None:
                return False
            self._write(self.tokens_path, tokens)
            return True

    def _read(self, path: Path, empty: Any) -> Any:
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return empty
        except (OSError, ValueError) as exc:
            log.warning("%s is not a file this app wrote (%s): read as empty", path, exc)
            return empty
        return value if isinstance(value, type(empty)) else empty

    def _write(self, path: Path, value: Any) -> None:
        temporary = path.with_name(f".{path.name}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(value, out, indent=1)
            os.replace(temporary, path)
        except OSError as exc:
            raise StoreError(f"cannot save to {path}: {exc.strerror or exc}") from None


def _row(server: RemoteServer) -> dict[str, Any]:
    return {
        "owner": server.owner,
        "name": server.name,
        "url": server.url,
        "enabled": server.enabled,
        "tools": server.tools,
        "added_ts": server.added_ts,
        "added_by": server.added_by,
        "changed_by": server.changed_by,
        "changed_ts": server.changed_ts,
    }
