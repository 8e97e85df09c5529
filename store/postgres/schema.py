"""The PostgreSQL ledger's schema, its migrations, and the database URL kept out of every message.

Guarantees:
- ``migrate(url)`` applies the numbered plain SQL files of ``store/postgres/migrations`` (``0001_name.sql``, ...)
  that the database has not seen, in order, each in its own transaction together with its row in ``schema_migrations``,
  under a session advisory lock: instances starting together apply each migration exactly once. It returns the
  versions it applied.
- ``redact_dsn`` removes the password (``user:password@`` and a ``password=`` key) from a URL; no message from this
  package names a URL any other way. ``describe_db_error`` gives a readable, redacted reason for a failure.
- ``connect`` raises ``DatabaseUnavailableError`` (never the driver's error, which could quote the URL) when the
  server cannot be reached or refuses the login.
"""

from __future__ import annotations

import re
from pathlib import Path

import psycopg

from ledger.errors import DatabaseUnavailableError

MIGRATIONS = Path(__file__).with_name("migrations")
ADVISORY_LOCK = 7_325_001  # pg_advisory_lock key of schema migrations (any constant shared by all instances)
CONNECT_TIMEOUT = 5
_USERINFO = re.compile(r"(?P<scheme>\b[a-z][a-z0-9+.-]*://)(?P<user>[^/\s@:?#]*)(?::[^/\s@?#]*)?@", re.IGNORECASE)
_PASSWORD_KEY = re.compile(r"(?P<key>\bpassword\s*=\s*)(?:'[^']*'|[^\s&]+)", re.IGNORECASE)


def redact_dsn(text: str) -> str:
    """The URL (or any text holding one) with its password replaced by ``[redacted]``."""
    text = _USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:[redacted]@" if m["user"] else m[0], text)
    return _PASSWORD_KEY.sub(r"\g<key>[redacted]", text)


def describe_db_error(exc: BaseException) -> tuple[str, str]:
    """(a key naming the kind of failure, a readable reason without credentials) for a database failure."""
    detail = redact_dsn(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
    if isinstance(exc, psycopg.OperationalError | DatabaseUnavailableError):
        return "db-unreachable", f"the database cannot be reached ({detail})"
    sqlstate = getattr(exc, "sqlstate", None)
    if isinstance(exc, psycopg.Error):
        return f"db-{sqlstate or type(exc).__name__}", f"the database refused a write ({detail})"
    return f"error-{type(exc).__name__}", f"a write failed ({type(exc).__name__}: {detail})"


def connect(url: str, *, autocommit: bool = True) -> psycopg.Connection[tuple[object, ...]]:
    try:
        return psycopg.connect(url, autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT)
    except psycopg.Error as exc:
        raise DatabaseUnavailableError(redact_dsn(url), describe_db_error(exc)[1]) from None


def migration_files() -> list[tuple[int, str, Path]]:
    """(version, name, path) of every migration file, in order."""
    found = []
    for path in sorted(MIGRATIONS.glob("*.sql")):
        number, _, name = path.stem.partition("_")
        found.append((int(number), name, path))
    return found


def migrate(url: str) -> list[int]:
    """Apply the migrations this database lacks, under the advisory lock; returns the versions applied."""
    applied: list[int] = []
    with connect(url) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (ADVISORY_LOCK,))
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
                "(version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            done = {int(str(row[0])) for row in conn.execute("SELECT version FROM schema_migrations")}
            for version, name, path in migration_files():
                if version in done:
                    continue
                with conn.transaction():
                    conn.execute(path.read_text().encode())  # plain SQL, several statements, no parameters
                    conn.execute("INSERT INTO schema_migrations (version, name) VALUES (%s, %s)", (version, name))
                applied.append(version)
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (ADVISORY_LOCK,))
    return applied


def has_schema(conn: psycopg.Connection[tuple[object, ...]]) -> bool:
    row = conn.execute("SELECT to_regclass('events') IS NOT NULL").fetchone()
    return bool(row and row[0])
