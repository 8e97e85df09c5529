"""Team mode's people: accounts with argon2id passwords, sign-in with limits, and server-side sessions that every
instance on the same store accepts.

Guarantees:
- A session is a random cookie value (``secrets.token_urlsafe(32)``) kept only as its sha256 (``SessionRecord``);
  a new one at every sign-in (no fixation). It holds while it is not ended, its account exists and is not
  disabled, it was seen within ``IDLE`` and began within ``ABSOLUTE``.
- ``sign_in`` refuses with the one sentence ``WRONG`` whether the name or the password was wrong, in the same
  time either way (``engine.people.passwords``); the front door counts the refusals per address and per account
  and says "wait" after too many (``ui.signin``), after checking: a correct password is never refused by that.
- ``person_of(cookie)`` answers from a cache at most ``FRESH`` seconds old (``refresh`` re-reads the store off the
  loop; the app runs it every second for the sessions in use), so the front door never waits on the store for a
  session it has seen: a disabled account or an ended session is out within ``FRESH`` + one refresh everywhere.
- Store calls block (call ``sign_in``, ``session``, ``refresh``, ``add``, ``disable`` off the event loop).
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import secrets
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from engine.people.passwords import hash_password, password_matches, password_problem
from engine.stamps import now_iso
from store.accounts import Account, AccountStore, SessionRecord

IDLE = timedelta(hours=12)
ABSOLUTE = timedelta(days=7)
FRESH = 2.5  # seconds a cached answer about a session holds (the sweep re-reads the ones in use every second)
UNUSED = 600.0  # seconds after its last request a session leaves the cache (read from the store if it returns)
FORGET_ENDED = 300.0  # seconds an ended session stays known as ended (its pages are sent away within a second)
SEEN_EVERY = timedelta(minutes=5)  # a session's last-seen time is written at most this often
NAME = re.compile(r"[a-z0-9][a-z0-9._@-]{0,63}")
WRONG = "That username and password do not match an account."


class PeopleError(ValueError):
    """A command about people cannot be done; the message is one sentence for the person."""


@dataclass(frozen=True, slots=True)
class Person:
    id: str  # "local:<name>": what events and owned things name
    name: str
    admin: bool = False


@dataclass(frozen=True, slots=True)
class SignedIn:
    person: Person
    cookie: str  # the session's cookie value: given to the browser once, never kept


def session_key(cookie: str) -> str:
    return hashlib.sha256(cookie.encode("utf-8", "surrogatepass")).hexdigest()


def person_of_account(account: Account) -> Person:
    return Person(account.person, account.display or account.name, account.admin)


class People:
    def __init__(self, store: AccountStore) -> None:
        self.store = store
        self._cache: dict[str, tuple[float, Person | None]] = {}  # session key -> (when read, who)
        self._used: dict[str, float] = {}  # session key -> when a request last presented it
        self._lock = threading.Lock()

    # accounts -------------------------------------------------------------------------------------------------
    def add(self, name: str, password: str, *, admin: bool = False) -> Account:
        name = name.strip().lower()
        if not NAME.fullmatch(name):
            raise PeopleError(
                "A username is 1-64 lowercase letters, digits and . _ @ - (starting with a letter or digit)."
            )
        if name in self.store.accounts():
            raise PeopleError(f"There is already an account named {name}.")
        problem = password_problem(password)
        if problem:
            raise PeopleError(problem)
        account = Account(name, hash_password(password), admin=admin, created_ts=now_iso())
        self.store.put_account(account)
        return account

    def accounts(self) -> list[Account]:
        return sorted(self.store.accounts().values(), key=lambda a: a.name)

    def disable(self, name: str) -> int:
        """Disable the account and end its sessions (how many were open)."""
        account = self._account(name)
        self.store.put_account(dataclasses.replace(account, disabled=True))
        ended = self.store.end_sessions(account.name)
        self._forget(account.name)
        return ended

    def enable(self, name: str) -> None:
        self.store.put_account(dataclasses.replace(self._account(name), disabled=False))

    def set_password(self, name: str, password: str) -> None:
        problem = password_problem(password)
        if problem:
            raise PeopleError(problem)
        account = self._account(name)
        self.store.put_account(dataclasses.replace(account, password_hash=hash_password(password)))
        self.store.end_sessions(account.name)  # a new password signs every browser out
        self._forget(account.name)

    # sessions -------------------------------------------------------------------------------------------------
    def sign_in(self, name: str, password: str) -> SignedIn:
        name = name.strip().lower()
        account = self.store.accounts().get(name)
        if password_matches(password, account.password_hash if account else ""):
            assert account is not None
            return self.start_session(account)
        raise PeopleError(WRONG)

    def signed_in_elsewhere(self, name: str, display: str, *, admin: bool) -> SignedIn:
        """A person an OpenID Connect provider vouched for (``name``: ``oidc:<hash>``): their account is made or
        brought up to date (name claim, admin group), then a session starts, unless an admin disabled it."""
        account = self.store.accounts().get(name)
        if account is None:
            account = Account(name, "", admin=admin, created_ts=now_iso(), display=display)
        else:
            account = dataclasses.replace(account, admin=admin, display=display)
        if not account.disabled:
            self.store.put_account(account)
        return self.start_session(account)

    def start_session(self, account: Account) -> SignedIn:
        """A new session for ``account`` (never one given before: no fixation); a disabled one is refused."""
        if account.disabled:
            raise PeopleError("This account is disabled; ask an admin.")
        cookie = secrets.token_urlsafe(32)
        now = now_iso()
        self.store.put_session(SessionRecord(session_key(cookie), account.name, now, now))
        person = person_of_account(account)
        with self._lock:
            self._cache[session_key(cookie)] = (time.monotonic(), person)  # the first page needs no read
        return SignedIn(person, cookie)

    def sign_out(self, cookie: str, *, everywhere: bool = False) -> None:
        key = session_key(cookie)
        record = self.store.session(key)
        if record is None:
            return
        if everywhere:
            self.store.end_sessions(record.name)
            self._forget(record.name)
        else:
            self.store.put_session(dataclasses.replace(record, ended=True))
            with self._lock:
                self._cache[key] = (time.monotonic(), None)

    def cached(self, cookie: str) -> tuple[bool, Person | None]:
        """(whether the cache knows this session now, who it is): never touches the store. An ended session is
        known as ended for ``FORGET_ENDED`` s (it never holds again)."""
        key = session_key(cookie)
        with self._lock:
            hit = self._cache.get(key)
            self._used[key] = time.monotonic()  # a request used it: it counts as seen (idle expiry)
        if hit is None or (hit[1] is not None and time.monotonic() - hit[0] > FRESH):
            return False, None
        return True, hit[1]

    def last(self, cookie: str) -> Person | None:
        """The cache's last answer about this session, however old (None: ended, or never seen)."""
        with self._lock:
            hit = self._cache.get(session_key(cookie))
        return hit[1] if hit is not None else None

    def session(self, cookie: str) -> Person | None:
        """Who holds this session (None: nobody, or it ended or expired), read from the store and cached."""
        key = session_key(cookie)
        person = self._check(key)
        with self._lock:
            self._cache[key] = (time.monotonic(), person)
        return person

    def refresh(self) -> None:
        """Re-read every cached session that still holds (the app calls this off the loop each second). An ended
        one never holds again: it is not read again, and forgotten ``FORGET_ENDED`` seconds after it ended."""
        now = time.monotonic()
        with self._lock:
            for key, (when, person) in list(self._cache.items()):
                unused = now - self._used.get(key, when) > UNUSED  # read again from the store if it comes back
                if (person is None and now - when > FORGET_ENDED) or (person is not None and unused):
                    del self._cache[key]
                    self._used.pop(key, None)
            keys = [key for key, (_, person) in self._cache.items() if person is not None]
            used = {key for key in keys if now - self._used.get(key, 0.0) < SEEN_EVERY.total_seconds()}
        accounts = self.store.accounts()
        for key in keys:
            person = self._check(key, accounts, used=key in used)
            with self._lock:
                self._cache[key] = (time.monotonic(), person)

    def _check(self, key: str, accounts: dict[str, Account] | None = None, *, used: bool = True) -> Person | None:
        record = self.store.session(key)
        if record is None or record.ended:
            return None
        account = (accounts if accounts is not None else self.store.accounts()).get(record.name)
        if account is None or account.disabled:
            return None
        now = datetime.now(UTC)
        if now - _when(record.created_ts) > ABSOLUTE or now - _when(record.seen_ts) > IDLE:
            return None
        if used and now - _when(record.seen_ts) > SEEN_EVERY:  # only a session a request used is "seen"
            self.store.touch_session(key, now_iso())
        return person_of_account(account)

    def _account(self, name: str) -> Account:
        account = self.store.accounts().get(name.strip().lower())
        if account is None:
            raise PeopleError(f"There is no account named {name.strip().lower()}.")
        return account

    def _forget(self, name: str) -> None:
        gone = Account(name, "").person  # local:<name>, or the oidc: name itself
        with self._lock:
            for key, (_, person) in list(self._cache.items()):
                if person is not None and person.id == gone:
                    self._cache[key] = (time.monotonic(), None)


def _when(iso: str) -> datetime:
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)
