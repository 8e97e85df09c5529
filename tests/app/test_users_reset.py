"""``main.py users reset NAME``: a one-time link to set a new password, printed once on stdout as the path to put
after the team's address; the accounts file keeps only the token's hash; a new link ends the old one; a disabled,
an unknown and a provider's account are refused in a sentence (exit code 1, nothing printed on stdout).
"""

from __future__ import annotations

import json
from pathlib import Path

from engine.people import People, ResetLinks, session_key
from store.accounts import FileAccounts
from tests.support.cli import run_cli

PASSWORD = "correct horse battery staple"


def team_folder(data: Path) -> People:
    people = People(FileAccounts(data / "accounts.json"))
    people.add("ann", PASSWORD, admin=True)
    people.add("ben", PASSWORD)
    return people


def printed_token(stdout: str) -> str:
    (line,) = [line for line in stdout.splitlines() if line.startswith("/signin/reset/")]
    return line.removeprefix("/signin/reset/")


def test_users_reset_prints_a_one_time_link_whose_token_only_the_link_holds(tmp_path: Path) -> None:
    people = team_folder(tmp_path)
    done = run_cli("users", "reset", "Ben", "--data-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "a one-time link for ben" in done.stdout and "24 hours" in done.stdout
    assert "put the address your team opens Ledger Chat at in front of it" in done.stdout
    token = printed_token(done.stdout)
    assert len(token) >= 43 and ResetLinks(people).holds(token)
    kept = (tmp_path / "accounts.json").read_text()
    assert token not in kept and session_key(token) in kept, "only the token's hash is stored"
    assert [r["name"] for r in json.loads(kept)["resets"]] == ["ben"]


def test_a_second_reset_ends_the_first_link(tmp_path: Path) -> None:
    people = team_folder(tmp_path)
    first = printed_token(run_cli("users", "reset", "ben", "--data-dir", str(tmp_path)).stdout)
    second = printed_token(run_cli("users", "reset", "ben", "--data-dir", str(tmp_path)).stdout)
    assert first != second and not ResetLinks(people).holds(first) and ResetLinks(people).holds(second)


def test_a_disabled_an_unknown_and_a_providers_account_are_refused_in_a_sentence(tmp_path: Path) -> None:
    people = team_folder(tmp_path)
    people.disable("ben")
    people.signed_in_elsewhere("oidc:0123abcd", "Eve Example", admin=False)
    for name, sentence in (
        ("ben", "ben is disabled: enable it first, then make a reset link."),
        ("nobody", "There is no account named nobody."),
        ("oidc:0123abcd", "That account signs in with the identity provider: it has no password to reset."),
    ):
        done = run_cli("users", "reset", name, "--data-dir", str(tmp_path))
        assert (done.returncode, done.stdout, done.stderr.strip()) == (1, "", f"ledger-chat: {sentence}"), name
    assert json.loads((tmp_path / "accounts.json").read_text()).get("resets", []) == [], "no link was made"
