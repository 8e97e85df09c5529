"""``main.py migrate --owner NAME``: a personal data folder moved to team mode. Every conversation nobody owns is
handed to the account, one ``handed`` event each; one that already belongs to someone stays theirs; ``--dry-run``
changes nothing; an unknown account or a folder an app still serves is refused in a sentence.
"""

from __future__ import annotations

import json
from pathlib import Path

from engine.people import People
from ledger.events import Created
from store.accounts import FileAccounts
from store.tinydb import Store
from tests.support.cli import run_cli
from tests.support.ledger_builders import conversation_events

PASSWORD = "correct horse battery staple"


def folder_with_two_chats(data: Path) -> None:
    store = Store.open(data)
    for event in conversation_events("c1", answers=1, chunks=3):
        store.append(event)
    for event in [Created(conversation_id="c2", title="Bob's", owner="local:bob")]:
        store.append(event)
    store.close()
    People(FileAccounts(data / "accounts.json")).add("ann", PASSWORD, admin=True)


def kinds(data: Path, cid: str) -> list[str]:
    exported = run_cli("export", "--conversation", cid, "--data-dir", str(data))
    assert exported.returncode == 0, exported.stderr
    return [json.loads(line)["kind"] for line in exported.stdout.splitlines()]


def test_a_hand_over_gives_every_unowned_chat_to_the_account_and_leaves_owned_ones_alone(tmp_path: Path) -> None:
    data = tmp_path / "data"
    folder_with_two_chats(data)
    before = {cid: kinds(data, cid) for cid in ("c1", "c2")}
    dry = run_cli("migrate", "--owner", "ann", "--dry-run", "--data-dir", str(data))
    assert (
        dry.returncode == 0
        and "would hand 1 conversation(s) to ann" in dry.stdout
        and "nothing was changed" in dry.stdout
    )
    assert {cid: kinds(data, cid) for cid in ("c1", "c2")} == before, "a dry run writes nothing"
    done = run_cli("migrate", "--owner", "ANN", "--data-dir", str(data))
    assert done.returncode == 0 and "handed 1 conversation(s) to ann; 1 already belong(s)" in done.stdout
    assert kinds(data, "c1") == [*before["c1"], "handed"] and kinds(data, "c2") == before["c2"]
    store = Store.open(data, read_only=True)
    assert {s.conversation_id: s.owner for s in store.summaries()} == {"c1": "local:ann", "c2": "local:bob"}
    store.close()
    again = run_cli("migrate", "--owner", "ann", "--data-dir", str(data))
    assert again.returncode == 0 and "handed 0 conversation(s)" in again.stdout, "re-running changes nothing"


def test_a_hand_over_to_an_account_that_does_not_exist_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    folder_with_two_chats(data)
    before = kinds(data, "c1")
    refused = run_cli("migrate", "--owner", "nobody", "--data-dir", str(data))
    assert refused.returncode == 1 and "there is no account named nobody" in refused.stderr
    assert kinds(data, "c1") == before
    both = run_cli("migrate", "--owner", "ann", "--from-data-dir", str(data))
    assert both.returncode == 2 and "--from-data-dir (a copy into PostgreSQL) or --owner NAME" in both.stderr
