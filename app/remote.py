"""The remote tool servers people add at run time (``engine.tools.RemoteServers``), opened beside the store: their
records and sealed tokens in ``<data-dir>/remote_servers.json`` and ``oauth_tokens.json``, or the
``remote_servers`` and ``oauth_tokens`` tables; the sealing key (``engine.tools.load_key``).

Guarantees: none with ``--no-tools``; a ``LEDGERCHAT_TOKEN_KEY`` that is not a Fernet key stops the start with a
``ConfigError`` sentence (never the key); team mode without one starts, and every sign-in says tokens cannot be
stored; the redirect URI a server sends the browser back to is ``/oauth/callback`` on ``--public-url`` (else on the
local URL, ``AppConfig.local_url``); with an https public URL, ``/oauth/client.json`` there is this app's OAuth
client ID metadata document, used where a server offers that instead of registration. ``close_remote`` closes
the store's pool (after the hub stopped its connections).
"""

from __future__ import annotations

from collections.abc import Callable

from app.config import AppConfig, ConfigError
from engine.tools import RemoteServers, TokenKeyError, Vault, load_key
from store.api import EventStore
from store.blobs import BlobStore
from store.tokens import FileRemote, RemoteStore

CALLBACK, CLIENT_DOCUMENT = "/oauth/callback", "/oauth/client.json"  # (ui.sign_in_card serves both)


def open_remote(
    config: AppConfig, store: EventStore, blobs: BlobStore, taken: Callable[[], set[str]]
) -> RemoteServers | None:
    if config.no_tools:
        return None
    records: RemoteStore
    if config.database_url:
        from store.postgres import PgStore
        from store.tokens import PgRemote

        instance = store.instance if isinstance(store, PgStore) else "export"
        records = PgRemote.open(config.database_url, instance=instance)
    else:
        records = FileRemote(config.data_dir)
    try:
        key = load_key(config.team, config.data_dir)
    except TokenKeyError as exc:
        raise ConfigError(str(exc)) from None
    base = (config.public_url or config.local_url).rstrip("/")
    return RemoteServers(
        records,
        Vault(records, key),
        blobs,
        redirect_uri=lambda: f"{base}{CALLBACK}",
        client_document=f"{base}{CLIENT_DOCUMENT}" if base.startswith("https://") else None,
        team=config.team,
        taken=taken,
        log_dir=config.data_dir / "logs",
    )


def close_remote(remote: RemoteServers | None) -> None:
    close = getattr(remote.store, "close", None) if remote is not None else None
    if callable(close):
        close()
