"""The commands that do not serve: ``export`` (a ledger as JSON Lines on stdout) and ``migrate`` (a TinyDB data
folder copied into PostgreSQL).

Guarantees: ``export`` opens the store read-only (safe while the app runs) and writes one event per line in
``docs/ledger.md``'s format (with ``--with-files``: a zip of ``events.jsonl`` and ``files/<sha256>``, the bytes of
every file the ledger names); a missing folder, an unknown conversation or an unreachable database is one line on
stderr and exit code 1. ``migrate`` checks counts and replay after copying and exits 1 on any conflict or mismatch;
the database URL is printed without its password.
"""

from __future__ import annotations

import sys
import zipfile
from typing import BinaryIO

from app.config import AppConfig
from app.stores import close_blobs, open_blobs, open_store
from ledger.events import AnyEvent
from store.api import EventStore


def stored_for_reading(config: AppConfig) -> EventStore | None:
    """The ledger opened read-only for ``export`` (as JSON Lines or as traces), or None once stderr says why not."""
    from ledger.errors import DatabaseUnavailableError

    if not config.database_url and not config.data_dir.is_dir():
        print(f"ledger-chat: no data folder at {config.data_dir} (--data-dir)", file=sys.stderr)
        return None
    try:
        return open_store(config, read_only=True)
    except DatabaseUnavailableError as exc:
        print(f"ledger-chat: {exc}", file=sys.stderr)
        return None


def export(config: AppConfig) -> int:
    from ledger.codec import to_jsonl

    store = stored_for_reading(config)
    if store is None:
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
    if config.with_files:
        _zip_with_files(config, store, events, out)
        return 0
    for line in to_jsonl(events):
        out.write(line.encode("utf-8"))
    out.flush()
    return 0


def _zip_with_files(config: AppConfig, store: EventStore, events: list[AnyEvent], out: BinaryIO) -> None:
    """A zip on ``out``: ``events.jsonl`` (the export above) and ``files/<sha256>``, the bytes of every file the
    events name (one each; a file no longer stored is named on stderr and left out)."""
    from engine.files import named_by
    from ledger.codec import to_jsonl

    blobs = open_blobs(config, store, read_only=True)
    try:
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zipped:
            zipped.writestr("events.jsonl", "".join(to_jsonl(events)).encode("utf-8"))
            for sha in named_by(events):
                data = blobs.get(sha)
                if data is None:
                    print(f"ledger-chat: the file {sha} is no longer stored; left out", file=sys.stderr)
                    continue
                zipped.writestr(f"files/{sha}", data)
    finally:
        close_blobs(blobs)
    out.flush()


def migrate(config: AppConfig) -> int:
    """Copy a TinyDB data folder into PostgreSQL, then check counts and replay; 1 on any conflict or mismatch."""
    from ledger.errors import DatabaseUnavailableError
    from store.migrate import copy_folder
    from store.postgres import redact_dsn

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
