"""The commands that do not serve: ``export`` (a ledger as JSON Lines on stdout) and ``migrate`` (a TinyDB data
folder copied into PostgreSQL).

Guarantees: ``export`` opens the store read-only (safe while the app runs) and writes one event per line in
``docs/ledger.md``'s format; a missing folder, an unknown conversation or an unreachable database is one line on
stderr and exit code 1. ``migrate`` checks counts and replay after copying and exits 1 on any conflict or mismatch;
the database URL is printed without its password.
"""

from __future__ import annotations

import sys

from app.config import AppConfig
from app.stores import open_store


def export(config: AppConfig) -> int:
    from ledger.codec import to_jsonl
    from ledger.errors import DatabaseUnavailableError

    if not config.database_url and not config.data_dir.is_dir():
        print(f"ledger-chat: no data folder at {config.data_dir} (--data-dir)", file=sys.stderr)
        return 1
    try:
        store = open_store(config, read_only=True)
    except DatabaseUnavailableError as exc:
        print(f"ledger-chat: {exc}", file=sys.stderr)
        return 1
    for problem in store.problems:
        print(f"ledger-chat: {problem}", file=sys.stderr)
    if config.conversation:
        if config.conversation not in store.conversation_ids():
            print(f"ledger-chat: no conversation {config.conversation} in {store.where}", file=sys.stderr)
            return 1
        events = list(store.events(config.conversation))
    else:
        events = store.all_events()
    out = sys.stdout.buffer
    for line in to_jsonl(events):
        out.write(line.encode("utf-8"))
    out.flush()
    return 0


def migrate(config: AppConfig) -> int:
    """Copy a TinyDB data folder into PostgreSQL, then check counts and replay; 1 on any conflict or mismatch."""
    from ledger.errors import DatabaseUnavailableError
    from store.copying import copy_folder
    from store.postgres.schema import redact_dsn

    source, url = config.from_data_dir, config.database_url
    assert source is not None and url is not None, "checked by load_config"
    if not source.is_dir():
        print(f"ledger-chat: no data folder at {source} (--from-data-dir)", file=sys.stderr)
        return 1
    try:
        report = copy_folder(source, url)
    except DatabaseUnavailableError as exc:
        print(f"ledger-chat: {exc}", file=sys.stderr)
        return 1
    for line in (*report.problems, *report.conflicts):
        print(f"ledger-chat: {line}", file=sys.stderr)
    print(
        f"{source} → {redact_dsn(url)}: {report.copied} copied, {report.extended} completed, "
        f"{report.already} already there, {report.tombstones} deletion(s) carried over, {report.events} events "
        f"written; counts {'equal' if report.counts_equal else 'DIFFER'}, "
        f"replay {'equal' if report.replay_equal else 'DIFFERS'}",
        flush=True,
    )
    return 0 if report.ok else 1
