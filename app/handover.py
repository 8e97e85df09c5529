"""``main.py migrate --owner NAME [--dry-run]``: a personal data folder (or database) moved to team mode, every
conversation nobody owns handed to the account ``NAME`` (also ``python3.11 tasks.py app migrate --owner NAME``).

Guarantees: the account must exist (``main.py users add`` first) and the store must be free to write (a TinyDB
folder an app still serves is refused with a sentence: stop it first); each unowned live conversation gets one
``handed`` event (``ledger.events.Handed``), nothing else is written, nothing is removed, and a conversation that
already belongs to someone is left as it is (re-running hands over only what is still unowned); ``--dry-run``
says what would change and writes nothing. Exit code 1, with one line on stderr, when it cannot be done or a
write did not reach the disk.
"""

from __future__ import annotations

import sys

from app.config import AppConfig
from app.stores import close_blobs, open_accounts, open_store
from engine.stamps import now_iso
from ledger.errors import DatabaseUnavailableError, DataDirInUseError, StoreError
from ledger.events import Handed


def hand_over(config: AppConfig) -> int:
    name, dry_run = config.owner, config.dry_run
    assert name is not None, "checked by load_config"
    name = name.strip().lower()
    try:
        accounts = open_accounts(config)
        try:
            account = accounts.accounts().get(name)
            if account is None:
                print(
                    f"ledger-chat: there is no account named {name}; add it first (users add {name})", file=sys.stderr
                )
                return 1
        finally:
            close_blobs(accounts)
        store = open_store(config, read_only=dry_run)
    except DataDirInUseError:
        print(
            "ledger-chat: the app is using this data folder; stop it first, then hand the chats over", file=sys.stderr
        )
        return 1
    except (DatabaseUnavailableError, StoreError) as exc:
        print(f"ledger-chat: {exc}", file=sys.stderr)
        return 1
    unsaved = 0
    try:
        live = [s for s in store.summaries() if not s.deleted]
        unowned = [s.conversation_id for s in live if s.owner is None]
        kept = len(live) - len(unowned)
        if not dry_run:
            for cid in unowned:
                store.events(cid)  # read in, so the event folds into the whole conversation
                store.append(Handed(conversation_id=cid, ts=now_iso(), owner=account.person))  # local: or oidc:
    finally:
        unsaved = store.close()
    if unsaved:
        print(f"ledger-chat: {unsaved} change(s) could not be saved; run it again", file=sys.stderr)
        return 1
    verb = "would hand" if dry_run else "handed"
    print(
        f"{verb} {len(unowned)} conversation(s) to {name}; {kept} already belong(s) to someone and stay(s) so"
        + ("; nothing was changed (--dry-run)" if dry_run else "")
    )
    return 0
