"""What every PostgreSQL side store shares (blobs, grants, presets: the tables beside the event log): how it opens,
how it closes, and how a statement is run and its failure reported. Each side store states only its table's work.

Guarantees:
- ``open(url, instance=..., read_only=...)`` brings the schema up to date first (``store.postgres.schema.migrate``)
  unless read-only, then opens the store's own small pool (``store.postgres.pool.make_pool``) named ``POOL`` with
  at most ``POOL_SIZE`` connections, its sessions named after the instance: a side store never waits behind, or
  holds up, the event writer. ``close`` closes the pool.
- ``_run(work)`` runs ``work(conn)`` for an idempotent statement: a connection that broke between the pool's check
  and the use is retried once on a fresh one (``store.postgres.pool.once_more``). A statement that must not run
  twice uses the pool itself and maps its own refusals before ``store_error``.
- Every other database error leaves a side store as ``StoreError`` with a readable reason and no password
  (``store_error``, from ``store.postgres.schema.describe_db_error``), never as a driver's exception.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, Self, TypeVar

import psycopg

from ledger.errors import StoreError
from store.postgres.pool import Conn, Pool, make_pool, once_more
from store.postgres.schema import describe_db_error, migrate

T = TypeVar("T")


class SideStore:
    """A table beside the event log, on a pool of its own (see the module)."""

    POOL: ClassVar[str]  # the pool's name, in the server's view of the sessions
    POOL_SIZE: ClassVar[int]  # the most connections the store holds at once

    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    @classmethod
    def open(cls, url: str, *, instance: str, read_only: bool = False) -> Self:
        if not read_only:
            migrate(url)
        return cls(make_pool(url, cls.POOL, max_size=cls.POOL_SIZE, instance=instance))

    def close(self) -> None:
        self._pool.close()

    def _run(self, work: Callable[[Conn], T]) -> T:
        try:
            return once_more(self._pool, work)
        except psycopg.Error as exc:
            raise store_error(exc) from None


def store_error(exc: psycopg.Error) -> StoreError:
    """The ``StoreError`` a side store raises for a database error: its readable reason, no password."""
    return StoreError(describe_db_error(exc)[1])
