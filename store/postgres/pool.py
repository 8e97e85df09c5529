"""Connection pools of the PostgreSQL store and of the attempt owners, and one retry for idempotent statements.

Guarantees:
- Every pool checks a connection before lending it (``ConnectionPool.check_connection``: one empty query); a
  connection that died (the server restarted) is discarded and replaced, so a restart costs one reconnect.
- ``once_more(pool, work)`` runs ``work(conn)`` in the pool's connection; when it fails with a connection-level
  error (``psycopg.OperationalError``, the connection broken between the check and the use) it runs ``work``
  once more on a fresh connection. Only for idempotent statements (lease acquisition, claim, renewal, takeover,
  release, the janitor): a batch of events is never retried here (the writer keeps it).
- A pool whose connections died (the database restarted or stopped) tries to connect again every
  ``RECONNECT_EVERY`` seconds at most, however long the outage lasted, and never gives up (psycopg_pool's own
  backoff doubles without a bound: after a 17 s outage it waited another ~2 minutes before its next try); so
  saving resumes within about a second of the database answering; so does a connection lent after one that failed
  its check (``_getconn_with_check_loop``), however many dead ones the pool held.
- A pool waits at most ``POOL_TIMEOUT`` seconds for a connection (``psycopg_pool.PoolTimeout``, a
  ``psycopg.OperationalError``), never the driver's default 30 s.
- An instance frozen in the middle of a batch (SIGSTOP, a VM paused) holds row locks that block the survivors'
  takeover. A session of these pools that sits in an open transaction for ``IDLE_IN_TRANSACTION`` seconds is
  ended by the server (``idle_in_transaction_session_timeout``), and a statement of this instance that waits
  longer than ``STATEMENT_TIMEOUT`` is cancelled (``statement_timeout``: a survivor's statement never hangs). A
  COPY whose client froze half-way is neither idle nor cancellable while the server waits for its data, so every
  session is named after its instance (``application_name``, ``session_name``) and a survivor ends the sessions
  of an owner whose lease expired by the database's clock (``store.postgres.owners.take_over``). The
  app never leaves a transaction idle on purpose and its statements take milliseconds; a write cancelled or ended
  so is retried like any failed write (the writer keeps the batch), and the fencing refuses it if it is too late.
"""

from __future__ import annotations

from collections.abc import Callable
from time import monotonic, sleep
from typing import TypeVar

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout
from psycopg_pool.base import AttemptWithBackoff

Conn = psycopg.Connection[tuple[object, ...]]
T = TypeVar("T")
POOL_TIMEOUT = 3.0
RECONNECT_EVERY = 0.5  # seconds between two tries to reconnect, at most, however long the database was away
IDLE_IN_TRANSACTION = 3.0  # seconds; well under the owner lease (5 s), so a frozen owner's locks go before it expires
STATEMENT_TIMEOUT = 5.0


class _SteadyAttempt(AttemptWithBackoff):
    """psycopg_pool's reconnect attempt, its delay bounded by ``RECONNECT_EVERY`` (see the module)."""

    INITIAL_DELAY = RECONNECT_EVERY / 2

    def update_delay(self, now: float) -> None:
        super().update_delay(now)
        self.delay = min(self.delay, RECONNECT_EVERY)


class Pool(ConnectionPool[Conn]):
    """A ``ConnectionPool`` that reconnects steadily (``_SteadyAttempt``) and never gives up reconnecting."""

    def _add_connection(self, attempt: AttemptWithBackoff | None, growing: bool = False) -> None:
        super()._add_connection(attempt or _SteadyAttempt(timeout=self.reconnect_timeout), growing)

    def _getconn_with_check_loop(self, deadline: float) -> Conn:
        """psycopg_pool's loop (3.2-3.3), with the steady backoff between two connections that failed their check.

        Its own waits 0, then 1 s, then 2 s: after a restart, a pool holding several dead connections made the
        first write after it wait out the whole ``POOL_TIMEOUT`` (issue 40: saving resumed 3.3 s after the
        database answered, in four restarts of five). Here the idle connections left are tried at once (a dead one
        fails its check in microseconds), and a wait between two fresh ones that failed is at most
        ``RECONNECT_EVERY``."""
        attempt: _SteadyAttempt | None = None
        while True:
            conn = self._getconn_unchecked(deadline - monotonic())
            try:
                self._check_connection(conn)
            except Exception:  # noqa: BLE001 - failed: given back (a dead one is replaced), then tried again
                self._putconn(conn, from_getconn=True)
            except BaseException:
                self._putconn(conn, from_getconn=True)
                raise
            else:
                return conn
            if conn.broken and self._pool:  # dead, and another idle one to try: after a restart they all died
                continue  # together and each fails at once (a live one that failed is waited for: no busy loop)
            now = monotonic()
            if attempt is None:  # the first wait is none (psycopg_pool's too), the later ones steady
                attempt = _SteadyAttempt(timeout=deadline - now)
            else:
                attempt.update_delay(now)
            if (left := deadline - now) <= 0:
                raise PoolTimeout()
            sleep(min(attempt.delay, left))  # never past the deadline: POOL_TIMEOUT is the most a caller waits


def make_pool(url: str, name: str, *, max_size: int, instance: str) -> Pool:
    def configure(conn: Conn) -> None:
        conn.execute("SELECT set_config('application_name', %s, false)", (session_name(instance),))
        conn.execute(f"SET idle_in_transaction_session_timeout = {int(IDLE_IN_TRANSACTION * 1000)}")
        conn.execute(f"SET statement_timeout = {int(STATEMENT_TIMEOUT * 1000)}")

    return Pool(
        url, min_size=1, max_size=max_size, open=True, kwargs={"autocommit": True}, name=name,
        configure=configure, check=ConnectionPool.check_connection, timeout=POOL_TIMEOUT,
        reconnect_timeout=float("inf"),
    )  # fmt: skip


def session_name(instance: str) -> str:
    """The ``application_name`` of an instance's sessions (the server keeps 63 bytes of it)."""
    return instance.encode()[:63].decode(errors="ignore")


def once_more(pool: Pool, work: Callable[[Conn], T]) -> T:
    """``work(conn)``, retried once on a fresh connection after a connection-level failure."""
    try:
        with pool.connection() as conn:
            return work(conn)
    except psycopg.OperationalError:
        pass
    with pool.connection() as conn:
        return work(conn)
