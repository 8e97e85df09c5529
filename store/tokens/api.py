"""What a store of remote tool servers offers (``RemoteStore``), and the one in memory (``MemoryRemote``).

A remote server is a name and a streamable-HTTP URL a person added from the Tools panel: ``owner`` is that person
(team mode: a personal server), or None (a team server an admin added; every server in personal mode). Its
``tools`` are what it listed the last time it was reached (JSON text: not secret), so its tools can be offered
before anyone signed in to it. A sealed token is the ciphertext of one person's OAuth tokens and client
registration for one server (key ``token_key``); this store never sees a token in clear.

Guarantees: ``servers`` gives every server as last written by any instance sharing the store (no cache); ``stamp``
is a short text that changes whenever a server is put or removed by anyone sharing the store (so a copy of
``servers`` read after a stamp is stale once the stamp differs), cheap enough to read before every turn; ``put``
replaces the server with the same owner and name; ``remove`` removes it (and every sealed token of it: a team
server's of everyone, a personal one's of its owner) and says
whether it was there; ``sealed``/``seal``/``forget`` read, replace and remove one sealed token. Methods may block
on I/O (call them off the event loop) and raise ``ledger.errors.StoreError`` with a readable reason.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Protocol


@dataclass(frozen=True, slots=True)
class RemoteServer:
    owner: str | None  # the person whose server it is; None: a team server (and every server in personal mode)
    name: str
    url: str
    enabled: bool = True
    tools: str = "[]"  # what it listed last: JSON list of {name, description, inputSchema, annotations}
    added_ts: str = ""
    added_by: str | None = None  # the person who added it (None in personal mode, and for servers of before)
    changed_by: str | None = None  # who last switched it on or off (None: nobody since it was added)
    changed_ts: str = ""  # when ("": never since it was added)

    def with_tools(self, tools: str) -> RemoteServer:
        return replace(self, tools=tools)


def token_key(person: str | None, server: str) -> str:
    """The key of one person's sealed tokens for one server (``|``: a person id never holds one)."""
    return f"{person or ''}|{server}"


def of_server(key: str, owner: str | None, name: str) -> bool:
    """Whether a sealed token's key goes with the server (a team server's: everyone's; a personal one: its owner's)."""
    return key == token_key(owner, name) if owner is not None else key.endswith(f"|{name}")


class RemoteStore(Protocol):
    def servers(self) -> list[RemoteServer]: ...

    def stamp(self) -> str: ...

    def put(self, server: RemoteServer) -> None: ...

    def remove(self, owner: str | None, name: str) -> bool: ...

    def sealed(self, key: str) -> bytes | None: ...

    def seal(self, key: str, value: bytes) -> None: ...

    def forget(self, key: str) -> bool: ...


class MemoryRemote:
    def __init__(self) -> None:
        self._servers: dict[tuple[str, str], RemoteServer] = {}
        self._tokens: dict[str, bytes] = {}
        self._lock = threading.Lock()
        self._changes = 0

    def servers(self) -> list[RemoteServer]:
        with self._lock:
            return list(self._servers.values())

    def stamp(self) -> str:
        with self._lock:
            return str(self._changes)

    def put(self, server: RemoteServer) -> None:
        with self._lock:
            self._servers[(server.owner or "", server.name)] = server
            self._changes += 1

    def remove(self, owner: str | None, name: str) -> bool:
        with self._lock:
            self._changes += 1
            for key in [k for k in self._tokens if of_server(k, owner, name)]:
                del self._tokens[key]
            return self._servers.pop((owner or "", name), None) is not None

    def sealed(self, key: str) -> bytes | None:
        with self._lock:
            return self._tokens.get(key)

    def seal(self, key: str, value: bytes) -> None:
        with self._lock:
            self._tokens[key] = value

    def forget(self, key: str) -> bool:
        with self._lock:
            return self._tokens.pop(key, None) is not None
