"""A throwaway PostgreSQL cluster for tests: ``initdb`` + ``pg_ctl`` in a temp dir, on a free 127.0.0.1 port.

Debian's ``postgresql`` package provides the binaries (``tasks.py test`` installs it when missing). PostgreSQL
refuses to run as root, so as root the cluster runs as the package's ``postgres`` OS user (``runuser``). The
superuser ``ledger`` has a password (``PASSWORD``), so URLs carry a credential the app must never reveal.
Each test gets its own database (``new_database``); the cluster is stopped and removed at the end.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

from tests.support.app_process import free_port

PASSWORD = "pg-secret-9f3b2c7d1e"
USER = "ledger"


def binaries() -> Path | None:
    """The newest installed PostgreSQL server's bin folder, if any."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return Path(found[-1]).parent if found else None


def unavailable_reason() -> str | None:
    if binaries() is None:
        return "PostgreSQL is not installed (tasks.py test installs Debian's postgresql package when it can)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' OS user to run the server as"
    return None


class PostgresCluster:
    def __init__(self) -> None:
        found = binaries()
        assert found is not None, unavailable_reason()
        self.bin: Path = found
        self.dir = Path(tempfile.mkdtemp(prefix="ledgerchat-pg-"))
        self.data = self.dir / "data"
        self.port = free_port()
        self.as_root = os.geteuid() == 0

    def _run(self, *cmd: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if self.as_root else []
        result = subprocess.run([*prefix, *cmd], capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            raise RuntimeError(f"{cmd[0]} failed: {result.stdout[-1500:]} {result.stderr[-1500:]}")

    def start(self) -> PostgresCluster:
        if self.as_root:
            shutil.chown(self.dir, "postgres", "postgres")
        pwfile = self.dir / "pw"
        pwfile.write_text(PASSWORD + "\n")
        if self.as_root:
            shutil.chown(pwfile, "postgres", "postgres")
        self._run(
            str(self.bin / "initdb"), "-D", str(self.data), "-U", USER, "--pwfile", str(pwfile),
            "-A", "scram-sha-256", "-E", "UTF8", "--locale", "C.UTF-8", "--no-sync",
        )  # fmt: skip
        self.up()
        return self

    def up(self) -> None:
        """Start the server (again: after ``down``); returns once it accepts connections (same port, same data)."""
        options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.dir / "log"), "-w", "-o", options,
                  "start")  # fmt: skip

    def down(self) -> None:
        """Stop the server (``-m fast``: every session is ended), keeping its data for ``up``."""
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def restart(self, mode: str = "fast") -> None:
        """``pg_ctl restart -m mode`` (``fast``: every session ends with "terminating connection due to administrator
        command"); returns once the server accepts connections again (same port and options)."""
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.dir / "log"), "-m", mode, "-w",
                  "restart")  # fmt: skip

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh empty database; returns its URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        try:
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


def throwaway_cluster() -> Iterator[PostgresCluster]:
    """A fixture's body: a started cluster of its own, stopped after its scope; the test is skipped, saying why,
    where PostgreSQL's server binaries are missing (a failure unless the run allows it: tests/support/skips.py)."""
    import pytest

    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    cluster = PostgresCluster().start()
    yield cluster
    cluster.stop()
