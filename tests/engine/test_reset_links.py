"""One-time password links (``engine.people.ResetLinks``) over the real account stores (a JSON file, a real
PostgreSQL database, and memory): only the token's hash is kept, a link sets a password once, within 24 hours (the
clock is the test's, no waiting), a new link ends the old one, and every refusal of a link is the same sentence.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from engine.people import LINK_GONE, RESET_VALID, LinkGone, People, PeopleError, ResetLinks, session_key
from store.accounts import AccountStore, FileAccounts, MemoryAccounts, PgAccounts

PASSWORD = "correct horse battery staple"
NEW = "a brand new long password"


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 3, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture(params=["file", "postgres", "memory"])
def people(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[People]:
    store: AccountStore
    if request.param == "postgres":
        database = PgAccounts.open(request.getfixturevalue("database_url"), instance="test")
        request.addfinalizer(database.close)
        store = database
    else:
        store = MemoryAccounts() if request.param == "memory" else FileAccounts(tmp_path / "accounts.json")
    people = People(store)
    people.add("ann", PASSWORD, admin=True)
    people.add("ben", PASSWORD)
    yield people


@pytest.fixture
def clock() -> Clock:
    return Clock()


def test_a_link_sets_a_new_password_once_ends_every_session_and_signs_the_browser_in(
    people: People, clock: Clock, tmp_path: Path
) -> None:
    links = ResetLinks(people, clock)
    held = people.sign_in("ben", PASSWORD)
    token = links.make("Ben")
    assert len(token) >= 43 and links.holds(token)
    record = people.store.reset(session_key(token))
    assert record is not None and record.key != token and record.name == "ben"
    if (tmp_path / "accounts.json").exists():
        assert token not in (tmp_path / "accounts.json").read_text(), "only the token's hash is kept"
    signed = links.use(token, NEW)
    assert signed.person.id == "local:ben" and people.session(signed.cookie) == signed.person
    assert people.session(held.cookie) is None, "every session of the account before the link ended"
    with pytest.raises(PeopleError):
        people.sign_in("ben", PASSWORD)
    people.sign_in("ben", NEW)
    assert not links.holds(token)
    with pytest.raises(LinkGone, match=LINK_GONE):
        links.use(token, "yet another long password")
    people.sign_in("ben", NEW)  # the second use changed nothing


def test_a_link_holds_for_24_hours_and_not_a_moment_longer(people: People, clock: Clock) -> None:
    links = ResetLinks(people, clock)
    token = links.make("ben")
    clock.now += RESET_VALID - timedelta(seconds=1)
    assert links.holds(token)
    clock.now += timedelta(seconds=1)
    assert not links.holds(token)
    with pytest.raises(LinkGone, match=LINK_GONE):
        links.use(token, NEW)
    people.sign_in("ben", PASSWORD)  # the password is unchanged


def test_a_new_link_ends_the_old_one(people: People, clock: Clock) -> None:
    links = ResetLinks(people, clock)
    old, new = links.make("ben"), links.make("ben")
    assert not links.holds(old) and links.holds(new)
    with pytest.raises(LinkGone):
        links.use(old, NEW)
    links.use(new, NEW)


def test_an_unknown_a_used_and_an_expired_link_are_refused_with_the_same_sentence(people: People, clock: Clock) -> None:
    links = ResetLinks(people, clock)
    used, expired = links.make("ben"), links.make("ann")
    links.use(used, NEW)
    clock.now += RESET_VALID
    sentences = []
    for token in ("made-up-token-that-nobody-made", used, expired):
        with pytest.raises(LinkGone) as refused:
            links.use(token, NEW)
        sentences.append(str(refused.value))
    assert sentences == [LINK_GONE] * 3


def test_a_password_the_rules_refuse_leaves_the_link_holding(people: People, clock: Clock) -> None:
    links = ResetLinks(people, clock)
    token = links.make("ben")
    with pytest.raises(PeopleError, match="at least 8") as refused:
        links.use(token, "short")
    assert not isinstance(refused.value, LinkGone) and links.holds(token)
    links.use(token, NEW)


def test_a_disabled_an_unknown_and_a_providers_account_get_no_link(people: People, clock: Clock) -> None:
    links = ResetLinks(people, clock)
    token = links.make("ben")
    people.disable("ben")
    assert not links.holds(token), "a link made before the account was disabled no longer holds"
    for name, words in (("ben", "ben is disabled"), ("nobody", "no account named nobody")):
        with pytest.raises(PeopleError, match=words):
            links.make(name)
    people.signed_in_elsewhere("oidc:0123abcd", "Eve Example", admin=False)
    with pytest.raises(PeopleError, match="signs in with the identity provider"):
        links.make("oidc:0123abcd")


def test_of_two_uses_of_one_link_at_once_only_one_sets_the_password(people: People, clock: Clock) -> None:
    links = ResetLinks(people, clock)
    token = links.make("ben")
    start, outcomes = threading.Barrier(2), []

    def use(password: str) -> None:
        start.wait()
        try:
            links.use(token, password)
            outcomes.append(password)
        except LinkGone:
            outcomes.append("refused")

    threads = [threading.Thread(target=use, args=(p,)) for p in (NEW, "the other long password")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(outcomes).count("refused") == 1, outcomes
    (winner,) = [o for o in outcomes if o != "refused"]
    people.sign_in("ben", winner)
