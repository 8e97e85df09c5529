"""Team mode's people (``engine.people``) over the real account stores: passwords kept only as argon2id hashes,
sign-in that never says which of name and password was wrong, sessions that end, expire and follow a disabled
account, and who acted recorded on what the engine appends.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from engine.people import WRONG, People, PeopleError, Viewer, acting_as, session_key
from engine.people.people import ABSOLUTE, IDLE
from ledger.errors import StoreError
from store.accounts import FileAccounts, MemoryAccounts
from tests.support.engine import EngineFactory
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until

PASSWORD = "correct horse battery staple"


@pytest.fixture(params=["memory", "file"])
def people(request: pytest.FixtureRequest, tmp_path: Path) -> People:
    store = MemoryAccounts() if request.param == "memory" else FileAccounts(tmp_path / "accounts.json")
    people = People(store)
    people.add("Ann", PASSWORD, admin=True)
    people.add("ben", PASSWORD)
    return people


def test_a_password_is_kept_only_as_an_argon2id_hash(people: People, tmp_path: Path) -> None:
    (ann, ben) = people.accounts()
    assert ann.name == "ann" and ann.admin and not ben.admin, "names are lowercased; the role is kept"
    assert ann.password_hash.startswith("$argon2id$") and ann.password_hash != ben.password_hash, "a salt each"
    if (tmp_path / "accounts.json").exists():
        text = (tmp_path / "accounts.json").read_text()
        assert PASSWORD not in text and oct((tmp_path / "accounts.json").stat().st_mode)[-3:] == "600"


def test_a_wrong_name_and_a_wrong_password_are_refused_with_the_same_sentence(people: People) -> None:
    sentences = []
    for name, password in (("ann", "wrong password"), ("nobody", PASSWORD), ("ann", "")):
        with pytest.raises(PeopleError) as refused:
            people.sign_in(name, password)
        sentences.append(str(refused.value))
    assert sentences == [WRONG] * 3


def test_a_session_is_a_new_random_cookie_kept_only_as_its_hash(people: People) -> None:
    first, second = people.sign_in("ann", PASSWORD), people.sign_in(" ANN ", PASSWORD)
    assert first.cookie != second.cookie and len(first.cookie) >= 43, "a new session at every sign-in"
    assert people.session(first.cookie) == first.person and first.person.id == "local:ann"
    record = people.store.session(session_key(first.cookie))
    assert record is not None and record.key != first.cookie and first.cookie not in repr(record)
    assert people.session("made-up") is None


def test_signing_out_ends_one_session_and_everywhere_ends_all_of_them(people: People) -> None:
    one, two, other = (people.sign_in(n, PASSWORD) for n in ("ann", "ann", "ben"))
    people.sign_out(one.cookie)
    assert people.session(one.cookie) is None and people.session(two.cookie) is not None
    people.sign_out(two.cookie, everywhere=True)
    assert people.session(two.cookie) is None and people.session(other.cookie) is not None


def test_a_disabled_account_cannot_sign_in_and_its_sessions_end_at_once(people: People) -> None:
    held = people.sign_in("ben", PASSWORD)
    assert people.cached(held.cookie) == (True, held.person)
    assert people.disable("ben") == 1
    assert people.cached(held.cookie) == (True, None), "the cache forgets it at once"
    assert people.session(held.cookie) is None
    with pytest.raises(PeopleError, match="disabled"):
        people.sign_in("ben", PASSWORD)
    people.enable("ben")
    assert people.session(people.sign_in("ben", PASSWORD).cookie) is not None


def test_a_new_password_ends_every_session_and_only_the_new_one_signs_in(people: People) -> None:
    held = people.sign_in("ann", PASSWORD)
    people.set_password("ann", "another long password")
    assert people.session(held.cookie) is None
    with pytest.raises(PeopleError):
        people.sign_in("ann", PASSWORD)
    people.sign_in("ann", "another long password")


@pytest.mark.parametrize("age", ["idle", "absolute"])
def test_a_session_expires_when_idle_too_long_or_too_old(people: People, age: str) -> None:
    held = people.sign_in("ann", PASSWORD)
    key = session_key(held.cookie)
    record = people.store.session(key)
    assert record is not None
    long_ago = (datetime.now(UTC) - (IDLE if age == "idle" else ABSOLUTE) - timedelta(minutes=1)).isoformat()
    changed = {"seen_ts": long_ago} if age == "idle" else {"created_ts": long_ago}
    people.store.put_session(dataclasses.replace(record, **changed))
    assert people.session(held.cookie) is None


def test_bad_names_bad_passwords_and_a_second_account_of_one_name_are_refused_in_a_sentence(people: People) -> None:
    for name, password, words in (
        ("", PASSWORD, "username"),
        ("a b", PASSWORD, "username"),
        ("x" * 65, PASSWORD, "username"),
        ("cat", "short", "at least 8"),
        ("ANN", PASSWORD, "already an account"),
    ):
        with pytest.raises(PeopleError, match=words):
            people.add(name, password)


def test_an_accounts_file_that_is_not_one_is_refused_never_read_as_no_accounts(tmp_path: Path) -> None:
    path = tmp_path / "accounts.json"
    path.write_text(json.dumps({"something": "else"}))
    with pytest.raises(StoreError, match="not an accounts file"):
        People(FileAccounts(path)).accounts()
    assert json.loads(path.read_text()) == {"something": "else"}, "nothing was overwritten"


async def test_what_a_person_sends_names_them_and_another_person_reaches_none_of_it(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    upstream.plan(Behavior(text="Ann's answer."))
    with acting_as("local:ann"):
        cid = engine.create_conversation()
        await engine.submit(cid, "a secret plan")
    await wait_until(lambda: not engine.is_streaming(cid))
    events = engine.store.events(cid)
    assert [e.owner for e in events if e.KIND == "created"] == ["local:ann"]
    assert [e.actor for e in events if e.KIND == "submitted"] == ["local:ann"]
    ann, ben = Viewer(team=True, person="local:ann"), Viewer(team=True, person="local:ben")
    assert [s.conversation_id for s in engine.summaries(viewer=ann)] == [cid]
    assert engine.summaries(viewer=ben) == [] and engine.search("secret", viewer=ben) == []
    assert await engine.search_async("secret", viewer=ben) == []
    assert await engine.load(cid, ben) is None and await engine.exported(cid, ben) is None
    assert await engine.load(cid, ann) is not None and await engine.exported(cid, ann)
    assert list(engine.read_conversations(viewer=ben)) == []
    assert engine.summaries(viewer=Viewer(team=True, person=None)) == [], "a page without a person sees nothing"


def test_only_a_request_keeps_a_session_alive_and_nothing_reopens_an_ended_one(people: People) -> None:
    held = people.sign_in("ann", PASSWORD)
    key = session_key(held.cookie)
    record = people.store.session(key)
    assert record is not None
    nearly_idle = (datetime.now(UTC) - IDLE + timedelta(minutes=30)).isoformat()
    people.store.put_session(dataclasses.replace(record, seen_ts=nearly_idle))
    people.refresh()
    assert people.store.session(key).seen_ts == nearly_idle, "the instance's own checks are not use"
    assert people.cached(held.cookie)[1] == held.person  # a request presents the cookie
    people.refresh()
    assert people.store.session(key).seen_ts > nearly_idle, "a request's use is"
    people.sign_out(held.cookie)
    people.store.touch_session(key, datetime.now(UTC).isoformat())
    assert people.session(held.cookie) is None, "a late touch never reopens it"
