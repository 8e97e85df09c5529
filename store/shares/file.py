"""Share links in one JSON file beside the TinyDB ledger (``<data-dir>/share_links.json``, mode 0600).

Guarantees (beyond ``store.shares.api.ShareStore``): every write replaces the file whole (a temporary file, then
``os.replace``), so a crash leaves the old or the new links, never half; a missing file is no links; a file that is
not what this module writes is read as no links (logged: every link then answers "not found", the safe side) and
replaced on the next write. It holds the tokens' hashes only, never a token. ``find`` reads the file on every call.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path

from ledger.errors import StoreError
from store.shares.api import ShareLink

log = logging.getLogger("ledger_chat.shares")
FIELDS = ("token_sha256", "share_id", "conversation_id", "owner", "created_ts")


class FileShares:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def find(self, token_sha256: str) -> ShareLink | None:
        with self._lock:
            return self._read().get(token_sha256)

    def add(self, link: ShareLink) -> None:
        with self._lock:
            links = self._read()
            links[link.token_sha256] = link
            self._write(links)

    def remove(self, share_id: str) -> bool:
        with self._lock:
            links = self._read()
            kept = {h: link for h, link in links.items() if link.share_id != share_id}
            if len(kept) == len(links):
                return False
            self._write(kept)
            return True

    def links(self) -> list[ShareLink]:
        with self._lock:
            return list(self._read().values())

    def _read(self) -> dict[str, ShareLink]:
        try:
            rows = json.loads(self.path.read_text(encoding="utf-8"))
            links = [ShareLink(**{k: r[k] for k in FIELDS}) for r in rows]
            return {link.token_sha256: link for link in links}
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, TypeError, KeyError) as exc:
            log.warning("%s is not a share links file (%s): read as no links", self.path, exc)
            return {}

    def _write(self, links: dict[str, ShareLink]) -> None:
        rows = [{k: getattr(link, k) for k in FIELDS} for link in links.values()]
        temporary = self.path.with_name(f".{self.path.name}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(json.dumps(rows, indent=1))
            os.replace(temporary, self.path)
        except OSError as exc:
            raise StoreError(f"cannot save the share links to {self.path}: {exc.strerror or exc}") from None
