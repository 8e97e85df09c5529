"""What every grant store offers (``GrantStore``), and the one in memory (``MemoryGrants``).

A server grant lets every call of one tool of one server (key ``server/tool``) run without asking, in every chat,
while the tool's grant hash is the one granted (``engine.tools.approval``). In team mode a grant is one person's:
its key is ``<person>|server/tool`` (``server_grant_key``) and it lets only the calls in that person's chats run. Chat
grants are not here: they are in each conversation's ledger (``ledger.events.approval``).

Guarantees: ``grants`` gives key → ``Grant`` as last written by any instance sharing the store (no cache);
``grant`` replaces the key's grant; ``revoke`` removes it and says whether it was there. Methods may block on
I/O (call them off the event loop) and raise ``ledger.errors.StoreError`` with a readable reason.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Protocol

from ledger.reduce_approval import grant_key


@dataclass(frozen=True, slots=True)
class Grant:
    key: str  # "server/tool"
    grant_hash: str
    granted_ts: str  # ISO 8601 UTC, stamped by the engine


def server_grant_key(owner: str | None, server: str, tool: str) -> str:
    """The store's key of a server grant: the chat grants' ``server/tool`` (``ledger.reduce_approval.grant_key``),
    or ``<person>|server/tool`` for one person's (team mode: a person id never holds ``|`` or ``/``)."""
    key = grant_key(server, tool)
    return key if owner is None else f"{owner}|{key}"


def split_key(key: str) -> tuple[str | None, str, str]:
    """``server_grant_key``'s inverse: (owner, server, tool)."""
    person, bar, rest = key.partition("|")
    owner = person if bar else None
    server, _, tool = (rest if bar else key).partition("/")
    return owner, server, tool


class GrantStore(Protocol):
    def grants(self) -> dict[str, Grant]: ...

    def grant(self, grant: Grant) -> None: ...

    def revoke(self, key: str) -> bool: ...


class MemoryGrants:
    def __init__(self) -> None:
        self._grants: dict[str, Grant] = {}
        self._lock = threading.Lock()

    def grants(self) -> dict[str, Grant]:
        with self._lock:
            return dict(self._grants)

    def grant(self, grant: Grant) -> None:
        with self._lock:
            self._grants[grant.key] = grant

    def revoke(self, key: str) -> bool:
        with self._lock:
            return self._grants.pop(key, None) is not None
