"""``main.py users``: team mode's accounts from the command line (also ``python3.11 tasks.py app users …``).

Guarantees: ``add NAME [--admin] --password-stdin`` reads the password from standard input (one line; never from
the command line, where every process could read it) and stores only its argon2id hash; ``list`` prints each
account with its role and state, never a hash; ``disable NAME`` ends every session of the account at once (its
open pages go to the sign-in page within seconds on every instance, its running answers are stopped);
``enable NAME`` lets it sign in again; ``password NAME --password-stdin`` sets a new password and signs it out
everywhere; ``reset NAME`` prints a one-time link (``/signin/reset/<token>``, to put after the address the team
uses: there is no option naming it) with which the person sets a new password within ``RESET_VALID`` (24 h), once;
the account's earlier link stops working, and a disabled or OpenID Connect account gets none (``ResetLinks``). The
token is printed on stdout only, never logged. ``limit NAME VALUE`` sets a person's spend limit (``default``: they
fall back to everyone's; NAME ``default``: everyone's), without VALUE says the one in force (``engine.spend``).
Each works beside a running app (same store). A refusal is one
sentence on stderr and exit code 1.
"""

from __future__ import annotations

import sys

from app.config import AppConfig
from app.stores import close_blobs, open_accounts, open_limits
from engine.people import RESET_VALID, People, PeopleError, ResetLinks
from engine.spend import describe, effective, parse_limit
from ledger.errors import StoreError
from store.limits import DEFAULT
from ui.reset_page import RESET


def users(config: AppConfig) -> int:
    assert config.users is not None
    action, name, admin, from_stdin = config.users
    try:
        store = open_accounts(config)
    except StoreError as exc:
        print(f"ledger-chat: {exc}", file=sys.stderr)
        return 1
    people = People(store)
    try:
        if action == "list":
            for account in people.accounts():
                role = "admin" if account.admin else "member"
                state = "disabled" if account.disabled else "active"
                print(f"{account.name}\t{role}\t{state}\tsince {account.created_ts[:10]}")
            return 0
        assert name is not None
        if action in ("add", "password"):
            password = _password(from_stdin)
            if password is None:
                return 1
            if action == "add":
                people.add(name, password, admin=admin)
                print(f"added {name.strip().lower()} ({'admin' if admin else 'member'})")
            else:
                people.set_password(name, password)
                print(f"set a new password for {name}; every session of it was ended")
        elif action == "reset":
            token = ResetLinks(people).make(name)
            hours, who = RESET_VALID.total_seconds() / 3600, name.strip().lower()
            print(
                f"a one-time link for {who} to set a new password (once, within {hours:g} hours; an earlier one ends):"
            )
            print(f"{RESET}{token}")
            print(
                f"put the address your team opens Ledger Chat at in front of it (e.g. https://chat.example.org{RESET}...)"
            )
        elif action == "limit":
            print(spend_limit(config, people, name, config.limit_value))
        elif action == "disable":
            ended = people.disable(name)
            print(f"disabled {name}; {ended} session(s) ended")
        else:
            people.enable(name)
            print(f"enabled {name}")
        return 0
    except (PeopleError, StoreError) as exc:
        print(f"ledger-chat: {exc}", file=sys.stderr)
        return 1
    finally:
        close_blobs(store)


def spend_limit(config: AppConfig, people: People, name: str, value: str | None) -> str:
    """``users limit``: set (or, without ``value``, say) a person's or everyone's (``default``) spend limit."""
    store = open_limits(config)
    try:
        key = DEFAULT
        if name != "default":
            key = next((a.person for a in people.accounts() if a.name == name.strip().lower()), "")
            if not key:
                raise PeopleError(f"there is no account {name}")
        who = "everyone" if key == DEFAULT else name
        if value is None:
            return (
                f"{who}: {describe(effective(store.limits(), None if key == DEFAULT else key, config.default_limit))}"
            )
        if value.strip().lower() == "default" and key != DEFAULT:
            store.remove(key)
            return f"{who}: everyone's limit ({describe(effective(store.limits(), None, config.default_limit))})"
        try:
            limit = parse_limit(value)
        except ValueError as exc:
            raise PeopleError(str(exc)) from None
        store.put(key, limit)
        return f"{who}: {describe(limit)} (UTC days and months)"
    finally:
        close_blobs(store)


def _password(from_stdin: bool) -> str | None:
    if not from_stdin:
        print("ledger-chat: give the password on standard input with --password-stdin", file=sys.stderr)
        return None
    line = sys.stdin.readline()
    return line[:-1] if line.endswith("\n") else line
