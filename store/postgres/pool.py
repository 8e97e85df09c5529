"""Connection pools of the PostgreSQL store and of the attempt owners, and one retry for idempotent statements.

Guarantees:
- Every pool checks a connection before lending it (``ConnectionPool.check_connection``: one empty query); a
  connection that died (the server restarted) is discarded and replaced, so a restart costs one reconnect.
- ``once_more(pool, work)`` runs ``work(conn)`` in the pool's connection; when it fails with a connection-level
  error (``psycopg.OperationalError``, the connection broken between the check and the use) it runs ``work``
  once more on a fresh connection. Only for idempotent statements (lease acquisition, claim, renewal, takeover,
  release, the janitor): a batch of events is never retried here (the writer keeps it).
- A pool waits at most ``POOL_TIMEOUT`` seconds for a connection (``psycopg_pool.PoolTimeout``, a
  ``psycopg.OperationalError``), never the driver's default 30 s.
- A session of these pools that sits in an open transaction for ``IDLE_IN_TRANSACTION`` seconds is ended by the
  server (``idle_in_transaction_session_timeout``), and a statement that runs longer than ``STATEMENT_TIMEOUT``
  (a COPY whose client froze half-way) is cancelled (``statement_timeout``): either frees the row locks of an
  instance frozen in the middle of a batch (SIGSTOP, a VM paused), so the survivors' takeover of its
  conversations waits at most that long. The app never leaves a transaction idle on purpose (a batch is one burst
  of statements), and its statements take milliseconds; one cancelled by the timeout is retried like any failed
  write (the writer keeps the batch).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import psycopg
from psycopg_pool import ConnectionPool

Conn = psycopg.Connection[tuple[object, ...]]
Pool = ConnectionPool[Conn]
T = TypeVar("T")
POOL_TIMEOUT = 3.0
IDLE_IN_TRANSACTION = 3.0  # seconds; well under the owner lease (5 s), so a frozen owner's locks go before it expires
STATEMENT_TIMEOUT = 3.0


def make_pool(url: str, name: str, *, max_size: int) -> Pool:
    return ConnectionPool(
        url, min_size=1, max_size=max_size, open=True, kwargs={"autocommit": True}, name=name,
        configure=_configure, check=ConnectionPool.check_connection, timeout=POOL_TIMEOUT,
    )  # fmt: skip


def _configure(conn: Conn) -> None:
    conn.execute(f"SET idle_in_transaction_session_timeout = {int(IDLE_IN_TRANSACTION * 1000)}")
    conn.execute(f"SET statement_timeout = {int(STATEMENT_TIMEOUT * 1000)}")


def once_more(pool: Pool, work: Callable[[Conn], T]) -> T:
    """``work(conn)``, retried once on a fresh connection after a connection-level failure."""
    try:
        with pool.connection() as conn:
            return work(conn)
    except psycopg.OperationalError:
        pass
    with pool.connection() as conn:
        return work(conn)
