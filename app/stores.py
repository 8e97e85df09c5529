"""Which store the configuration asks for: PostgreSQL with ``--database-url``, else the TinyDB files of
``--data-dir``; and the blob store beside it (a ``blobs`` table in the same database, else files under
``<data-dir>/blobs``), the agent presets likewise (``open_presets``), and the server approval grants: an
``approval_grants`` table in the database, else ``<data-dir>/approval_grants.json`` (``store.grants``). Guarantees:
the back end's module is imported only when chosen (psycopg is not loaded for TinyDB); a read-only store gets blobs
that never write."""

from __future__ import annotations

from app.config import AppConfig
from store.accounts import AccountStore
from store.api import EventStore
from store.blobs import BlobStore
from store.grants import GrantStore
from store.limits import LimitStore
from store.presets import PresetStore
from store.shares import ShareStore


def open_store(config: AppConfig, *, read_only: bool = False) -> EventStore:
    if config.database_url:
        from store.postgres import PgStore

        return PgStore.open(config.database_url, read_only=read_only)
    from store.blobs import FolderBounding
    from store.tinydb import Store

    bounding = None if read_only else FolderBounding(config.data_dir / "blobs")  # older files' long texts: blobs
    return Store.open(config.data_dir, read_only=read_only, bounding=bounding)


def open_blobs(config: AppConfig, store: EventStore, *, read_only: bool = False) -> BlobStore:
    """The blob store that goes with ``store`` (opened by ``open_store``); close it with ``close_blobs``."""
    if config.database_url:
        from store.blobs import PgBlobs
        from store.postgres import PgStore

        instance = store.instance if isinstance(store, PgStore) else "export"
        return PgBlobs.open(config.database_url, instance=instance, read_only=read_only)
    from store.blobs import FolderBlobs

    return FolderBlobs(config.data_dir / "blobs", read_only=read_only)


def open_presets(config: AppConfig, store: EventStore, *, read_only: bool = False) -> PresetStore:
    """Where the agent presets are kept beside ``store``: the ``presets`` table, else ``<data-dir>/presets.json``."""
    if config.database_url:
        from store.postgres import PgPresets, PgStore

        instance = store.instance if isinstance(store, PgStore) else "export"
        return PgPresets.open(config.database_url, instance=instance, read_only=read_only)
    from store.presets import FilePresets

    return FilePresets(config.data_dir / "presets.json", read_only=read_only)


def close_blobs(blobs: BlobStore | GrantStore | PresetStore | AccountStore | LimitStore | ShareStore) -> None:
    close = getattr(blobs, "close", None)
    if callable(close):
        close()


def open_grants(config: AppConfig, store: EventStore) -> GrantStore:
    """The server grants that go with ``store``; close them with ``close_blobs`` (the same optional ``close``)."""
    if config.database_url:
        from store.grants import PgGrants
        from store.postgres import PgStore

        instance = store.instance if isinstance(store, PgStore) else "export"
        return PgGrants.open(config.database_url, instance=instance)
    from store.grants import FileGrants

    return FileGrants(config.data_dir / "approval_grants.json")


def open_accounts(config: AppConfig, instance: str = "users") -> AccountStore:
    """Team mode's accounts and sessions beside the ledger: the ``accounts`` and ``sessions`` tables, else
    ``<data-dir>/accounts.json``; close them with ``close_blobs``."""
    if config.database_url:
        from store.accounts import PgAccounts

        return PgAccounts.open(config.database_url, instance=instance)
    from store.accounts import FileAccounts

    return FileAccounts(config.data_dir / "accounts.json")


def open_limits(config: AppConfig, instance: str = "users") -> LimitStore:
    """The spend limits beside the accounts: the ``spend_limits`` table, else ``<data-dir>/spend_limits.json``
    (``store.limits``); close them with ``close_blobs``."""
    if config.database_url:
        from store.limits import PgLimits

        return PgLimits.open(config.database_url, instance=instance)
    from store.limits import FileLimits

    return FileLimits(config.data_dir / "spend_limits.json")


def open_shares(config: AppConfig, store: EventStore) -> ShareStore:
    """Share links' lookup beside ``store``: the ``share_links`` table, else ``<data-dir>/share_links.json``; close
    it with ``close_blobs``."""
    if config.database_url:
        from store.postgres import PgStore
        from store.shares import PgShares

        instance = store.instance if isinstance(store, PgStore) else "export"
        return PgShares.open(config.database_url, instance=instance)
    from store.shares import FileShares

    return FileShares(config.data_dir / "share_links.json")
