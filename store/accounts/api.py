"""What every account store offers (``AccountStore``), and the one in memory (``MemoryAccounts``).

Team mode's people and their sessions (``engine.people``): an ``Account`` is a name with an argon2id hash (never a
password), a role and whether it is disabled; a ``SessionRecord`` is one signed-in browser, kept under the sha256
of its cookie (never the cookie itself), with when it began, when it was last seen and whether it ended; a
``ResetRecord`` is an account's one-time link to set a new password, kept under the sha256 of its token (never the
token itself) with when it stops working.

Guarantees: ``accounts`` and ``session`` give what any instance sharing the store last wrote (no cache: the caching
is ``engine.people``'s); ``put_account`` replaces the name's record; ``put_session`` replaces the key's,
``touch_session`` only the last-seen time of an open one (never reopening an ended one); ``end_sessions(name)`` ends
every session of that name and says how many were open. An account has at most one reset: ``put_reset``
replaces the name's (the old link stops working); ``reset(key)`` reads one; ``take_reset(key)`` removes it and gives
it to one caller only (of two at once, on any instance, at most one gets it: a link is used at most once). Methods
may block on I/O (call them off the event loop) and raise ``ledger.errors.StoreError`` with a readable reason.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Account:
    name: str
    password_hash: str  # argon2id (``engine.people.passwords``); "" for one that must set a password first
    admin: bool = False
    disabled: bool = False
    created_ts: str = ""
    display: str = ""  # how the person is named on the page (an OpenID Connect account's name claim)

    @property
    def person(self) -> str:
        """The id every event and every owned thing names: ``local:<name>`` for a local account, the name itself
        for one from an OpenID Connect provider (``oidc:<hash of issuer and subject>``)."""
        return self.name if ":" in self.name else f"local:{self.name}"


@dataclass(frozen=True, slots=True)
class SessionRecord:
    key: str  # sha256 hex of the cookie's value
    name: str  # the account
    created_ts: str
    seen_ts: str
    ended: bool = False


@dataclass(frozen=True, slots=True)
class ResetRecord:
    key: str  # sha256 hex of the link's token
    name: str  # the account
    expires_ts: str  # UTC ISO 8601: the link stops working then


class AccountStore(Protocol):
    def accounts(self) -> dict[str, Account]: ...

    def put_account(self, account: Account) -> None: ...

    def session(self, key: str) -> SessionRecord | None: ...

    def put_session(self, record: SessionRecord) -> None: ...

    def touch_session(self, key: str, seen_ts: str) -> None: ...  # only an open one: an ended one stays ended

    def end_sessions(self, name: str) -> int: ...

    def put_reset(self, record: ResetRecord) -> None: ...  # the name's one reset: an older one is gone

    def reset(self, key: str) -> ResetRecord | None: ...

    def take_reset(self, key: str) -> ResetRecord | None: ...  # removed: no second caller gets it


class MemoryAccounts:
    def __init__(self) -> None:
        self._accounts: dict[str, Account] = {}
        self._sessions: dict[str, SessionRecord] = {}
        self._resets: dict[str, ResetRecord] = {}  # by account name: one each
        self._lock = threading.Lock()

    def accounts(self) -> dict[str, Account]:
        with self._lock:
            return dict(self._accounts)

    def put_account(self, account: Account) -> None:
        with self._lock:
            self._accounts[account.name] = account

    def session(self, key: str) -> SessionRecord | None:
        with self._lock:
            return self._sessions.get(key)

    def put_session(self, record: SessionRecord) -> None:
        with self._lock:
            self._sessions[record.key] = record

    def touch_session(self, key: str, seen_ts: str) -> None:
        with self._lock:
            record = self._sessions.get(key)
            if record is not None and not record.ended:
                self._sessions[key] = dataclasses.replace(record, seen_ts=seen_ts)

    def end_sessions(self, name: str) -> int:
        with self._lock:
            open_ = [r for r in self._sessions.values() if r.name == name and not r.ended]
            for record in open_:
                self._sessions[record.key] = dataclasses.replace(record, ended=True)
            return len(open_)

    def put_reset(self, record: ResetRecord) -> None:
        with self._lock:
            self._resets[record.name] = record

    def reset(self, key: str) -> ResetRecord | None:
        with self._lock:
            return next((r for r in self._resets.values() if r.key == key), None)

    def take_reset(self, key: str) -> ResetRecord | None:
        with self._lock:
            record = next((r for r in self._resets.values() if r.key == key), None)
            if record is not None:
                del self._resets[record.name]
            return record
