"""Accounts and sessions in one JSON file beside the TinyDB ledger (``<data-dir>/accounts.json``, mode 0600).

Guarantees (beyond ``store.accounts.api.AccountStore``): every write replaces the file whole (a temporary file,
then ``os.replace``), so a crash leaves the old or the new records, never half; each read-and-write holds an
exclusive lock on ``accounts.json.lock`` (``fcntl.flock``), so ``main.py users`` and a running app never lose each
other's changes; a missing file is no accounts; a
file that is not what this module writes is refused with ``StoreError`` (never read as "no accounts", which would
open a team's data to a new first admin); ended sessions older than ``KEEP_ENDED`` are dropped on write.
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
from store.accounts.api import Account, SessionRecord

KEEP_ENDED = timedelta(days=30)


class FileAccounts:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def accounts(self) -> dict[str, Account]:
        with self._lock:
            return self._read()[0]

    def put_account(self, account: Account) -> None:
        with self._locked():
            accounts, sessions = self._read()
            accounts[account.name] = account
            self._write(accounts, sessions)

    def session(self, key: str) -> SessionRecord | None:
        with self._lock:
            return self._read()[1].get(key)

    def put_session(self, record: SessionRecord) -> None:
        with self._locked():
            accounts, sessions = self._read()
            sessions[record.key] = record
            self._write(accounts, sessions)

    def touch_session(self, key: str, seen_ts: str) -> None:
        with self._locked():
            accounts, sessions = self._read()
            record = sessions.get(key)
            if record is not None and not record.ended:  # read and written under the lock: never reopened
                sessions[key] = dataclasses.replace(record, seen_ts=seen_ts)
                self._write(accounts, sessions)

    def end_sessions(self, name: str) -> int:
        with self._locked():
            accounts, sessions = self._read()
            open_ = [r for r in sessions.values() if r.name == name and not r.ended]
            for record in open_:
                sessions[record.key] = dataclasses.replace(record, ended=True)
            if open_:
                self._write(accounts, sessions)
            return len(open_)

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

    def _read(self) -> tuple[dict[str, Account], dict[str, SessionRecord]]:
        try:
            data: Any = json.loads(self.path.read_text(encoding="utf-8"))
            accounts = {a["name"]: Account(**a) for a in data["accounts"]}
            sessions = {s["key"]: SessionRecord(**s) for s in data["sessions"]}
            return accounts, sessions
        except FileNotFoundError:
            return {}, {}
        except OSError as exc:
            raise StoreError(f"cannot read the accounts in {self.path}: {exc.strerror or exc}") from None
        except (ValueError, TypeError, KeyError) as exc:
            raise StoreError(f"{self.path} is not an accounts file ({exc}); move it away to start again") from None

    def _write(self, accounts: dict[str, Account], sessions: dict[str, SessionRecord]) -> None:
        cutoff = (datetime.now(UTC) - KEEP_ENDED).isoformat()
        kept = [s for s in sessions.values() if not (s.ended and s.seen_ts < cutoff)]
        data = {
            "accounts": [dataclasses.asdict(a) for a in accounts.values()],
            "sessions": [dataclasses.asdict(s) for s in kept],
        }
        temporary = self.path.with_name(f".{self.path.name}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as out:
                json.dump(data, out, indent=1)
            os.replace(temporary, self.path)
        except OSError as exc:
            raise StoreError(f"cannot save the accounts to {self.path}: {exc.strerror or exc}") from None
