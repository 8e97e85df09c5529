"""One-time links to set a new password (``main.py users reset NAME``, the accounts page's "Reset link").

Guarantees:
- ``ResetLinks.make(name)`` gives a new random token (``secrets.token_urlsafe(32)``) for a local account; only its
  sha256 is stored (``store.accounts.ResetRecord``), with the time it stops working (``RESET_VALID`` after it was
  made). An account has one link at a time: a new one makes the old one stop working. A disabled account, an
  OpenID Connect account (its name holds ``:``: it signs in with the provider) and an unknown name are refused
  with a sentence (``PeopleError``).
- ``holds(token)`` says whether the link would set a password now; ``use(token, password)`` sets it (argon2id,
  ``engine.people.passwords``), ends every session of the account and starts a new one for the browser that used it.
  A link is used at most once (``AccountStore.take_reset``: of two uses at once, one wins); an unknown, used or
  expired link, or one whose account was disabled since, is refused with the one sentence ``LINK_GONE``
  (``LinkGone``), the same whichever it was. A password ``password_problem`` refuses is a ``PeopleError`` with its
  sentence, and the link still holds.
- The token is never kept, logged or put in the ledger; the clock is ``clock`` (tests pass one).
- Store calls block (call ``make``, ``holds`` and ``use`` off the event loop; ``use`` also hashes, slow on purpose).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from engine.people.passwords import password_problem
from engine.people.people import People, PeopleError, SignedIn, session_key
from store.accounts import Account, ResetRecord

RESET_VALID = timedelta(hours=24)
LINK_GONE = "This link is not valid any more: ask an admin for a new one."


class LinkGone(PeopleError):
    """The link is unknown, used or expired (which of them is never said)."""


def _now() -> datetime:
    return datetime.now(UTC)


class ResetLinks:
    def __init__(self, people: People, clock: Callable[[], datetime] = _now) -> None:
        self.people, self.clock = people, clock

    def make(self, name: str) -> str:
        """A new link's token for ``name`` (shown once; the account's earlier link stops working)."""
        name = name.strip().lower()
        account = self.people.store.accounts().get(name)
        if ":" in name:
            raise PeopleError("That account signs in with the identity provider: it has no password to reset.")
        if account is None:
            raise PeopleError(f"There is no account named {name}.")
        if account.disabled:
            raise PeopleError(f"{name} is disabled: enable it first, then make a reset link.")
        token = secrets.token_urlsafe(32)
        expires = (self.clock() + RESET_VALID).isoformat()
        self.people.store.put_reset(ResetRecord(session_key(token), name, expires))
        return token

    def holds(self, token: str) -> bool:
        return self._account(self.people.store.reset(session_key(token))) is not None

    def use(self, token: str, password: str) -> SignedIn:
        """Set ``password`` through the link, end the account's sessions and sign this browser in."""
        key = session_key(token)
        if self._account(self.people.store.reset(key)) is None:
            raise LinkGone(LINK_GONE)
        problem = password_problem(password)
        if problem:
            raise PeopleError(problem)  # the link still holds: the person tries another password
        account = self._account(self.people.store.take_reset(key))  # at most one caller gets it
        if account is None:
            raise LinkGone(LINK_GONE)
        self.people.set_password(account.name, password)  # ends every session of the account
        fresh = self.people.store.accounts().get(account.name)
        if fresh is None:
            raise LinkGone(LINK_GONE)
        return self.people.start_session(fresh)  # refused if it was disabled in the meantime

    def _account(self, record: ResetRecord | None) -> Account | None:
        """The account ``record`` may set a password for now (None: no record, expired, disabled, gone)."""
        if record is None or ":" in record.name or _when(record.expires_ts) <= self.clock():
            return None
        account = self.people.store.accounts().get(record.name)
        return None if account is None or account.disabled else account


def _when(iso: str) -> datetime:
    try:
        when = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)  # a damaged time: already expired
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)
