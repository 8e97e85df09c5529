"""The remote tool servers of a team, as ``app.parts`` wires them, for the engine's tests: records and sealed tokens
in memory (``store.tokens.MemoryRemote``), a fresh sealing key, files in memory, a redirect URI nobody serves."""

from __future__ import annotations

from cryptography.fernet import Fernet

from engine.tools import RemoteServers, Vault
from store.blobs import MemoryBlobs
from store.tokens import MemoryRemote

__all__ = ["team_servers"]


def team_servers(key: bytes | None = b"") -> RemoteServers:
    """A team's remote servers (``key``: the sealing key; ``b""`` a fresh one, None none at all)."""
    store = MemoryRemote()
    vault = Vault(store, Fernet.generate_key() if key == b"" else key)
    return RemoteServers(store, vault, MemoryBlobs(), redirect_uri=lambda: "http://127.0.0.1:9/cb", team=True)
