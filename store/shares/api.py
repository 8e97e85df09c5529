"""What every share-link store offers (``ShareStore``), and the one in memory (``MemoryShares``).

A share link (``/s/<token>``) is looked up by its token's sha256: the store maps that hash to the conversation and
the link's id in its ledger (``ledger.events.share``), and whose chat it is. The token itself is never stored.
The ledger records each link's life (made, updated, revoked, opened); the store answers whether a link holds now.

Guarantees: ``find`` reads what any instance sharing the store last wrote, on every call (no cache), so a link
``remove``d on one instance opens nothing on any other from its next request on; ``add`` records a link (a hash
already there is replaced); ``remove`` deletes a link by its id and says whether it was there; ``links`` lists
every link. Methods may block on I/O (call them off the event loop) and raise ``ledger.errors.StoreError`` with
a readable reason.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class ShareLink:
    token_sha256: str  # sha256 (hex) of the link's token
    share_id: str  # the link's id in its conversation's ledger
    conversation_id: str
    owner: str | None  # team mode: whose chat it is; None in personal mode
    created_ts: str  # ISO 8601 UTC, stamped by the engine


def token_hash(token: str) -> str:
    """The sha256 (hex) a link's token is stored and looked up as."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class ShareStore(Protocol):
    def find(self, token_sha256: str) -> ShareLink | None: ...

    def add(self, link: ShareLink) -> None: ...

    def remove(self, share_id: str) -> bool: ...

    def links(self) -> list[ShareLink]: ...


class MemoryShares:
    def __init__(self) -> None:
        self._links: dict[str, ShareLink] = {}
        self._lock = threading.Lock()

    def find(self, token_sha256: str) -> ShareLink | None:
        with self._lock:
            return self._links.get(token_sha256)

    def add(self, link: ShareLink) -> None:
        with self._lock:
            self._links[link.token_sha256] = link

    def remove(self, share_id: str) -> bool:
        with self._lock:
            found = [h for h, link in self._links.items() if link.share_id == share_id]
            for h in found:
                del self._links[h]
            return bool(found)

    def links(self) -> list[ShareLink]:
        with self._lock:
            return list(self._links.values())
