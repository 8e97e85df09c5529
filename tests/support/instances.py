"""Real app processes sharing one PostgreSQL database, for the cluster tests: up together, or one after another.

Guarantees: ``AppsOnOneDatabase`` holds instances A and B, which stay up, and spares a test may kill or freeze,
all on one database, and reads that database's rows as the ledger wrote them; ``AppAfterApp.start()`` starts an
instance on its database (a context manager that stops it), so a test can stop or kill one and start the next.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg

from tests.support.app_process import AppProcess
from tests.support.app_runner import AppRunner
from tests.support.waiting import wait_until_blocking


@dataclass(frozen=True, slots=True)
class AppsOnOneDatabase:
    """Instances A and B, which stay up, and spares that the tests kill or freeze as owners of a stream."""

    url: str
    a: AppProcess
    b: AppProcess
    spares: tuple[AppProcess, ...]

    def others(self, owner: AppProcess) -> set[int]:
        """The pids of the instances other than ``owner`` (any of them may finalize the attempts it owned)."""
        return {p.proc.pid for p in (self.a, self.b, *self.spares) if p is not owner and p.proc is not None}

    def holding(self, cid: str) -> None:
        """Wait until the owner's first writes of chat ``cid`` (its attempt's ``started``) are in the database,
        where another instance reads it: the owner writes them a moment after its page shows the chat's address
        (on a busy machine, a moment too late for a page opened on B at once, which then finds no such chat and
        goes to the start page)."""
        wait_until_blocking(lambda: any(k == "started" for k, _, _ in self.rows(cid)), 10, "the chat in the database")

    def rows(self, cid: str) -> list[tuple[str, str, dict[str, Any]]]:
        """(kind, writer, payload) of the conversation's events in the database, in seq order."""
        with psycopg.connect(self.url) as conn:
            found = conn.execute(
                "SELECT kind, writer, payload FROM events WHERE conversation_id = %s ORDER BY seq", (cid,)
            ).fetchall()
        return [(str(k), str(w), dict(p)) for k, w, p in found]


@dataclass(frozen=True, slots=True)
class AppAfterApp:
    """Instances started one at a time on one database: each finds what the one before it stored."""

    url: str
    run_app: AppRunner

    @contextmanager
    def start(self) -> Iterator[AppProcess]:
        """An instance on the database, in a data folder of its own; stopped when the block ends."""
        with self.run_app("--database-url", self.url) as process:
            yield process
