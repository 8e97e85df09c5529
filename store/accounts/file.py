"""Accounts, sessions and one-time password links in one JSON file beside the TinyDB ledger
(``<data-dir>/accounts.json``, mode 0600).

Guarantees (beyond ``store.accounts.api.AccountStore``): every write replaces the file whole (a temporary file,
fsynced, then ``os.replace`` and an fsync of the folder), so a crash or a power cut leaves the old or the new
records, never half; each read-and-write holds an exclusive lock on ``accounts.json.lock`` (``fcntl.flock``), so
``main.py users`` and a running app never lose each other's changes; a missing file is no accounts; a file that
is not what this module writes is refused with ``StoreError`` (never read as "no accounts", which would
open a team's data to a new first admin); ended sessions older than ``KEEP_ENDED`` are dropped on write. A file
written before password links existed reads as one without any.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ledger.errors import StoreError
from store.accounts.api import Account, ResetRecord, SessionRecord
from store.tinydb import fsync_dir

KEEP_ENDED = timedelta(days=30)
Records = tuple[dict[str, Account], dict[str, SessionRecord], dict[str, ResetRecord]]  # resets by account name


class FileAccounts:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def accounts(self) -> dict[str, Account]:
        with self._lock:
            return self._read()[0]

    def put_account(self, account: Account) -> None:
        with self._locked():
            records = self._read()
            records[0][account.name] = account
            self._write(records)

    def session(self, key: str) -> SessionRecord | None:
        with self._lock:
            return self._read()[1].get(key)

    def put_session(self, record: SessionRecord) -> None:
        with self._locked():
            records = self._read()
            records[1][record.key] = record
            self._write(records)

    def touch_session(self, key: str, seen_ts: str) -> None:
        with self._locked():
            records = self._read()
            record = records[1].get(key)
            if record is not None and not record.ended:  # read and written under the lock: never reopened
                records[1][key] = dataclasses.replace(record, seen_ts=seen_ts)
                self._write(records)

    def end_sessions(self, name: str) -> int:
        with self._locked():
            records = self._read()
            open_ = [r for r in records[1].values() if r.name == name and not r.ended]
            for record in open_:
                records[1][record.key] = dataclasses.replace(record, ended=True)
            if open_:
                self._write(records)
            return len(open_)

    def put_reset(self, record: ResetRecord) -> None:
        with self._locked():
            records = self._read()
            records[2][record.name] = record
            self._write(records)

    def reset(self, key: str) -> ResetRecord | None:
        with self._lock:
            return next((r for r in self._read()[2].values() if r.key == key), None)

    def take_reset(self, key: str) -> ResetRecord | None:
        with self._locked():  # read and removed under the lock: one caller, of any process, gets it
            records = self._read()
            record = next((r for r in records[2].values() if r.key == key), None)
            if record is not None:
                del records[2][record.name]
                self._write(records)
            return record

    @contextmanager
    def _locked(self) -> Iterator[None]:
        with self._lock:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                descriptor = os.open(self.path.with_name(self.path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
            except OSError as exc:
                raise StoreError(f"cannot lock the accounts in {self.path}: {exc.strerror or exc}") from None
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX)
                yield
            finally:
                os.close(descriptor)

    def _read(self) -> Records:
        try:
            data: Any = json.loads(self.path.read_text(encoding="utf-8"))
            accounts = {a["name"]: Account(**a) for a in data["accounts"]}
            sessions = {s["key"]: SessionRecord(**s) for s in data["sessions"]}
            resets = {r["name"]: ResetRecord(**r) for r in data.get("resets", [])}
            return accounts, sessions, resets
        except FileNotFoundError:
            return {}, {}, {}
        except OSError as exc:
            raise StoreError(f"cannot read the accounts in {self.path}: {exc.strerror or exc}") from None
        except (ValueError, TypeError, KeyError) as exc:
            raise StoreError(f"{self.path} is not an accounts file ({exc}); move it away to start again") from None

    def _write(self, records: Records) -> None:
        accounts, sessions, resets = records
        cutoff = (datetime.now(UTC) - KEEP_ENDED).isoformat()
        kept = [s for s in sessions.values() if not (s.ended and s.seen_ts < cutoff)]
        data = {
            "accounts": [dataclasses.asdict(a) for a in accounts.values()],
            "sessions": [dataclasses.asdict(s) for s in kept],
            "resets": [dataclasses.asdict(r) for r in resets.values()],
        }
        temporary = self.path.with_name(f".{self.path.name}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as out:
                json.dump(data, out, indent=1)
                out.flush()
                os.fsync(out.fileno())  # on disk before it replaces the old records: a power cut loses neither
            os.replace(temporary, self.path)
            fsync_dir(self.path.parent)
        except OSError as exc:
            raise StoreError(f"cannot save the accounts to {self.path}: {exc.strerror or exc}") from None
