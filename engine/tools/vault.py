"""OAuth tokens at rest: sealed with a key from the environment, one record per person and server.

Guarantees:
- ``load_key`` gives the key tokens are sealed with (Fernet: AES-128-CBC with HMAC-SHA256, from ``cryptography``):
  ``LEDGERCHAT_TOKEN_KEY`` when set (a Fernet key: 32 url-safe base64 bytes; a malformed one is refused at start
  with a sentence); else in personal mode ``<data-dir>/token.key``, made once with mode 0600; else (team mode)
  none: ``Vault.refusal`` says why, and no token is ever stored (a sign-in then ends with that sentence).
- ``VaultStorage`` is the ``mcp`` SDK's ``TokenStorage`` for one person and one server: what it is given (the
  tokens with their expiry time, the client registration) is sealed whole before it reaches the store
  (``store.tokens``), and nothing else of it is kept but in memory; a record that cannot be opened (another key)
  reads as none (signed out). ``forget`` removes the record. A token never reaches a log line or an exception here.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from pathlib import Path
from typing import Any

from store.tokens import RemoteStore, token_key

log = logging.getLogger("ledger_chat.remote")
KEY_ENV = "LEDGERCHAT_TOKEN_KEY"
NO_KEY = (
    f"tokens cannot be stored: this team deployment has no {KEY_ENV} (set it to a Fernet key, for example the "
    "output of: python -c 'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())')"
)


class TokenKeyError(ValueError):
    """The token key in the environment is not a Fernet key (the message says so, without the key)."""


def load_key(team: bool, data_dir: Path | None) -> bytes | None:
    """The sealing key (see the module's guarantees); None in team mode without ``LEDGERCHAT_TOKEN_KEY``."""
    from cryptography.fernet import Fernet

    given = os.environ.get(KEY_ENV, "").strip()
    if given:
        try:
            Fernet(given.encode("ascii"))
        except (ValueError, UnicodeEncodeError):
            raise TokenKeyError(f"{KEY_ENV} is not a Fernet key (32 url-safe base64-encoded bytes)") from None
        return given.encode("ascii")
    if team or data_dir is None:
        return None
    path = data_dir / "token.key"
    try:
        return path.read_bytes().strip()
    except FileNotFoundError:
        pass
    data_dir.mkdir(parents=True, exist_ok=True)
    key = Fernet.generate_key()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(key)
    return key


class Vault:
    """Seals and opens token records with one key, over one store."""

    def __init__(self, store: RemoteStore, key: bytes | None) -> None:
        from cryptography.fernet import Fernet

        self.store = store
        self._fernet = Fernet(key) if key is not None else None

    @property
    def refusal(self) -> str | None:
        """Why no token can be stored (None: they can)."""
        return NO_KEY if self._fernet is None else None

    async def read(self, person: str | None, server: str) -> dict[str, Any]:
        from cryptography.fernet import InvalidToken

        sealed = await asyncio.to_thread(self.store.sealed, token_key(person, server))
        if sealed is None or self._fernet is None:
            return {}
        try:
            record = json.loads(self._fernet.decrypt(sealed))
        except (InvalidToken, ValueError):
            log.warning("the stored sign-in for %s could not be opened (another key?): signed out", server)
            return {}
        return record if isinstance(record, dict) else {}

    async def write(self, person: str | None, server: str, record: dict[str, Any]) -> None:
        if self._fernet is None:
            raise PermissionError(NO_KEY)
        sealed = self._fernet.encrypt(json.dumps(record).encode("utf-8"))
        await asyncio.to_thread(self.store.seal, token_key(person, server), sealed)

    async def forget(self, person: str | None, server: str) -> bool:
        return await asyncio.to_thread(self.store.forget, token_key(person, server))


class VaultStorage:
    """The SDK's ``TokenStorage`` for one person's sign-in to one server (see the module's guarantees)."""

    def __init__(self, vault: Vault, person: str | None, server: str) -> None:
        self.vault, self.person, self.server = vault, person, server
        self._record: dict[str, Any] | None = None

    async def _load(self) -> dict[str, Any]:
        if self._record is None:
            self._record = await self.vault.read(self.person, self.server)
        return self._record

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        tokens = (await self._load()).get("tokens")
        return OAuthToken.model_validate(tokens) if isinstance(tokens, dict) else None

    async def expires_at(self) -> float | None:
        value = (await self._load()).get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    async def set_tokens(self, tokens: Any) -> None:
        record = dict(await self._load())
        record["tokens"] = tokens.model_dump(mode="json", exclude_none=True)
        record["expires_at"] = time.time() + tokens.expires_in if tokens.expires_in else None
        await self.vault.write(self.person, self.server, record)
        self._record = record

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        client = (await self._load()).get("client")
        return OAuthClientInformationFull.model_validate(client) if isinstance(client, dict) else None

    async def set_client_info(self, client_info: Any) -> None:
        record = dict(await self._load())
        record["client"] = client_info.model_dump(mode="json", exclude_none=True)
        if self.vault.refusal is None:
            await self.vault.write(self.person, self.server, record)
        self._record = record  # without a key it lives in memory only (the sign-in ends at the token step)

    async def forget(self) -> None:
        self._record = {}
        await self.vault.forget(self.person, self.server)
