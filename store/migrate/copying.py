"""Copying a TinyDB data folder into PostgreSQL (``main.py migrate``): safe to run again, and checked.

Guarantees:
- The folder is only read (no lock taken, nothing in it changes; damage is reported, as at opening).
- Each conversation is copied with its own seqs and timestamps. Absent from the database: copied whole. Present
  with the same events: left alone. Present with a prefix of them (an interrupted copy): the rest is added.
  Present with other events, or being written by a running instance: not touched, reported as a conflict.
  Running the copy again therefore changes nothing and reports everything as already there.
- Conversations are written in transactions of up to ``CHUNK`` conversations; a failure leaves every earlier
  transaction whole, and the next run goes on from there.
- Deleted conversations (the folder's tombstones) become tombstones in the database: they stay deleted, with the
  ``deleted`` event the folder kept (what the conversation spent).
- ``verify`` reads the database afresh: for every live conversation of the folder the same number of events, the
  same events, and ``replay`` of the folder equal to ``replay`` of what the database holds for those conversations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from ledger.events import AnyEvent, Created, Renamed
from ledger.reducer import replay
from store.postgres import PgStore, column_text, connect, copy_rows, migrate
from store.tinydb import read_folder

CHUNK = 200
COPIED_BY = "migrate"


@dataclass
class CopyReport:
    copied: int = 0
    extended: int = 0
    already: int = 0
    tombstones: int = 0
    events: int = 0
    conflicts: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    counts_equal: bool = False
    replay_equal: bool = False

    @property
    def ok(self) -> bool:
        return not self.conflicts and self.counts_equal and self.replay_equal


def copy_folder(data_dir: Path, url: str) -> CopyReport:
    """Copy every conversation of ``data_dir`` into the database at ``url``, then verify the copy."""
    report = CopyReport()
    folder = read_folder(data_dir, writable=False, report=lambda _key, message: report.problems.append(message))
    migrate(url)
    target = PgStore.open(url, read_only=True)
    work: list[tuple[str, list[AnyEvent], int]] = []  # (conversation, events to add, seq already there)
    live = set(target.conversation_ids())
    for cid, events in folder.events.items():
        there = list(target.events(cid)) if cid in live else []
        if target.is_deleted(cid) or there != events[: len(there)]:
            report.conflicts.append(f"{cid}: the database holds other events for this conversation; not copied")
        elif len(there) == len(events):
            report.already += 1
        else:
            work.append((cid, events[len(there) :], len(there)))
    with connect(url, autocommit=False) as conn:
        for start in range(0, len(work), CHUNK):
            with conn.transaction():
                for cid, events, after in work[start : start + CHUNK]:
                    if _copy_conversation(conn, cid, events, after):
                        report.copied += after == 0
                        report.extended += after > 0
                        report.events += len(events)
                    else:
                        report.conflicts.append(f"{cid}: an instance is writing this conversation; not copied")
        with conn.transaction():
            for cid in sorted(folder.deleted):
                grave = folder.graves.get(cid)
                row = conn.execute(
                    "INSERT INTO conversations (id, deleted, deleted_at, last_seq) VALUES (%s, true, now(), %s) "
                    "ON CONFLICT (id) DO NOTHING RETURNING id",
                    (cid, grave.seq if grave is not None else 0),
                ).fetchone()
                report.tombstones += row is not None
                if row is not None and grave is not None:
                    copy_rows(conn, [grave], COPIED_BY)
    verify(folder.events, url, report)
    return report


Conn = psycopg.Connection[tuple[object, ...]]


def _copy_conversation(conn: Conn, cid: str, events: list[AnyEvent], after: int) -> bool:
    titles = [e.title for e in events if isinstance(e, Created | Renamed)]
    row = conn.execute(
        "INSERT INTO conversations AS c (id, title, last_seq) VALUES (%s, %s, %s) "
        "ON CONFLICT (id) DO UPDATE SET last_seq = excluded.last_seq, updated = now(), "
        "title = CASE WHEN %s THEN excluded.title ELSE c.title END "
        "WHERE c.last_seq = %s AND NOT c.deleted AND (c.writer IS NULL OR c.writer_until < now()) RETURNING id",
        (cid, column_text(titles[-1]) if titles else "", events[-1].seq, bool(titles), after),
    ).fetchone()
    if row is None:
        return False
    copy_rows(conn, events, COPIED_BY)
    return True


def verify(source: dict[str, list[AnyEvent]], url: str, report: CopyReport) -> None:
    """Compare the folder's live conversations with a fresh read of the database (counts, events, replay)."""
    target = PgStore.open(url, read_only=True)
    live = set(target.conversation_ids())
    copied = {cid: list(target.events(cid)) if cid in live else [] for cid in source}
    report.counts_equal = all(len(copied[cid]) == len(events) for cid, events in source.items())
    expected = [e for events in source.values() for e in events]
    actual = [e for events in copied.values() for e in events]
    report.replay_equal = expected == actual and replay(expected) == replay(actual)
