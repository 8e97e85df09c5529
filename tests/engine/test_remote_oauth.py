"""Remote tool servers behind a real OAuth authorization server (``tests.support.oauth_server``, the ``mcp`` SDK's
server auth): the sign-in a call needs, tokens refreshed one at a time, a refused refresh, a refused re-send, and
no token anywhere but sealed."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.tools.asking import Question, QuestionAnswer
from engine.tools.elicitation import Ask
from engine.tools.oauth_words import SignInEnded
from engine.tools.remote import Changer, RemoteServers
from engine.tools.vault import Vault, load_key
from store.blobs import MemoryBlobs
from store.tokens import FileRemote
from tests.support.oauth_upstream import OAuthUpstream
from tests.support.waiting import wait_until


@pytest.fixture
def short_lived() -> Iterator[OAuthUpstream]:
    upstream = OAuthUpstream(ttl=5)
    yield upstream
    upstream.stop()


async def servers(folder: Path, url: str) -> RemoteServers:
    store = FileRemote(folder)
    remote = RemoteServers(
        store,
        Vault(store, load_key(False, folder)),
        MemoryBlobs(),
        redirect_uri=lambda: "http://127.0.0.1:9/oauth/callback",
    )
    await remote.load()
    await remote.add(Changer(), "notes", url)
    return remote


def signing_in(remote: RemoteServers, upstream: OAuthUpstream, asked: list[Question]) -> Ask:
    """The person: opens the link of each sign-in asked (the server approves at once), the callback route takes it."""

    async def ask(question: Question) -> QuestionAnswer:
        asked.append(question)
        assert question.mode == "sign_in" and question.done is not None
        taken, _ = remote.signins.arrive(await upstream.authorize(question.url), None)
        assert taken
        return QuestionAnswer(await question.done)

    return ask


def nowhere_but_sealed(folder: Path, tokens: list[str]) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert not any(t.encode() in data for t in tokens), path


async def test_a_first_call_asks_to_sign_in_and_runs_once_signed_in(tmp_path: Path, oauth: OAuthUpstream) -> None:
    remote = await servers(tmp_path, oauth.url)
    asked: list[Question] = []
    outcome = await remote.call(None, "notes", "echo", {"text": "hi"}, None, signing_in(remote, oauth, asked))
    assert outcome.text == "echo: hi" and not outcome.is_error
    assert [q.message for q in asked] == ["Sign in to notes"]
    assert "code_challenge_method=S256" in asked[0].url and "resource=" in asked[0].url
    stats = oauth.stats()
    assert (stats["registered"], stats["exchanged"], stats["calls"]) == (1, 1, 1)
    assert [t["name"] for t in __import__("json").loads(remote.servers[0].tools)] == ["echo", "stamp", "slow_echo"]
    again = await remote.call(None, "notes", "echo", {"text": "again"}, None, signing_in(remote, oauth, asked))
    assert again.text == "echo: again" and len(asked) == 1  # signed in: nothing asked
    await remote.stop()
    nowhere_but_sealed(tmp_path, stats["tokens"])
    assert (tmp_path / "token.key").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "oauth_tokens.json").stat().st_mode & 0o777 == 0o600


async def test_an_expired_token_is_refreshed_once_while_five_calls_wait(
    tmp_path: Path, short_lived: OAuthUpstream
) -> None:
    remote = await servers(tmp_path, short_lived.url)
    asked: list[Question] = []
    ask = signing_in(remote, short_lived, asked)
    await remote.call(None, "notes", "echo", {"text": "first"}, None, ask, read_only=True)
    signed = time.time()
    await wait_until(lambda: time.time() > signed + 5, timeout=10)  # the access token expired
    outcomes = await asyncio.gather(
        *(remote.call(None, "notes", "echo", {"text": str(n)}, None, ask, read_only=True) for n in range(5))
    )
    assert sorted(o.text for o in outcomes) == [f"echo: {n}" for n in range(5)]
    assert short_lived.stats()["refreshed"] == 1 and len(asked) == 1
    await remote.stop()


async def test_a_token_the_server_stopped_accepting_is_refreshed_once_for_five_calls(
    tmp_path: Path, oauth: OAuthUpstream
) -> None:
    remote = await servers(tmp_path, oauth.url)
    asked: list[Question] = []
    ask = signing_in(remote, oauth, asked)
    await remote.call(None, "notes", "echo", {"text": "first"}, None, ask, read_only=True)
    oauth.expire()  # the server answers 401 to the token the app still holds as valid
    outcomes = await asyncio.gather(
        *(remote.call(None, "notes", "echo", {"text": str(n)}, None, ask, read_only=True) for n in range(5))
    )
    assert sorted(o.text for o in outcomes) == [f"echo: {n}" for n in range(5)]
    assert oauth.stats()["refreshed"] == 1 and len(asked) == 1
    await remote.stop()


async def test_a_call_refused_after_it_was_sent_is_not_sent_again_unless_read_only(
    tmp_path: Path, oauth: OAuthUpstream
) -> None:
    remote = await servers(tmp_path, oauth.url)
    asked: list[Question] = []
    ask = signing_in(remote, oauth, asked)
    await remote.call(None, "notes", "echo", {"text": "first"}, None, ask, read_only=True)
    oauth.expire()
    with pytest.raises(SignInEnded) as ended:
        await remote.call(None, "notes", "stamp", {"text": "x"}, None, ask, read_only=False)
    assert ended.value.status == "error" and "not sent again" in str(ended.value)
    assert oauth.stats()["stamps"] == 0 and oauth.stats()["refreshed"] == 1
    stamped = await remote.call(None, "notes", "stamp", {"text": "y"}, None, ask, read_only=False)
    assert stamped.text == "stamped #1: y"  # the refreshed token works for the next call
    await remote.stop()


async def test_a_refused_refresh_asks_to_sign_in_again_and_the_call_goes_on(
    tmp_path: Path, short_lived: OAuthUpstream
) -> None:
    remote = await servers(tmp_path, short_lived.url)
    asked: list[Question] = []
    ask = signing_in(remote, short_lived, asked)
    await remote.call(None, "notes", "echo", {"text": "first"}, None, ask, read_only=True)
    short_lived.revoke_refresh()
    signed = time.time()
    await wait_until(lambda: time.time() > signed + 5, timeout=10)
    outcome = await remote.call(None, "notes", "echo", {"text": "after"}, None, ask, read_only=True)
    assert outcome.text == "echo: after" and len(asked) == 2
    stats = short_lived.stats()
    assert stats["refresh_refused"] >= 1 and stats["exchanged"] == 2
    await remote.stop()


async def test_giving_up_the_sign_in_ends_the_call_not_run_or_declined(tmp_path: Path, oauth: OAuthUpstream) -> None:
    remote = await servers(tmp_path, oauth.url)

    async def stop(question: Question) -> QuestionAnswer:
        return QuestionAnswer("cancel", by="stop")

    async def decline(question: Question) -> QuestionAnswer:
        return QuestionAnswer("decline")

    with pytest.raises(SignInEnded) as stopped:
        await remote.call(None, "notes", "echo", {"text": "x"}, None, stop)
    assert stopped.value.status == "not_run" and "stopped while it waited for a sign-in to notes" in str(stopped.value)
    with pytest.raises(SignInEnded) as declined:
        await remote.call(None, "notes", "echo", {"text": "x"}, None, decline)
    assert declined.value.status == "declined"
    assert oauth.stats()["calls"] == 0
    await remote.stop()


async def test_the_calls_deadline_waits_while_the_person_signs_in_again(
    tmp_path: Path, short_lived: OAuthUpstream
) -> None:
    remote = await servers(tmp_path, short_lived.url)
    asked: list[Question] = []
    ask = signing_in(remote, short_lived, asked)
    await remote.call(None, "notes", "echo", {"text": "first"}, None, ask, read_only=True)
    short_lived.revoke_refresh()
    signed = time.time()
    await wait_until(lambda: time.time() > signed + 5, timeout=10)

    async def slowly(question: Question) -> QuestionAnswer:
        shown = time.monotonic()
        await wait_until(lambda: time.monotonic() > shown + 1.5, timeout=5)  # longer than the call's deadline
        return await ask(question)

    outcome = await remote.call(None, "notes", "echo", {"text": "late"}, None, slowly, read_only=True, timeout=1.0)
    assert outcome.text == "echo: late" and len(asked) == 2
    await remote.stop()


async def test_a_restart_keeps_the_sign_in_and_the_tools(tmp_path: Path, oauth: OAuthUpstream) -> None:
    remote = await servers(tmp_path, oauth.url)
    asked: list[Question] = []
    await remote.call(None, "notes", "echo", {"text": "one"}, None, signing_in(remote, oauth, asked))
    await remote.stop()
    store = FileRemote(tmp_path)
    again = RemoteServers(
        store, Vault(store, load_key(False, tmp_path)), MemoryBlobs(), redirect_uri=lambda: "http://127.0.0.1:9/cb"
    )
    await again.load()
    assert [t.name for t in again.tools_of(again.servers[0])] == ["echo", "stamp", "slow_echo"]
    outcome = await again.call(None, "notes", "echo", {"text": "two"}, None, signing_in(again, oauth, asked))
    assert outcome.text == "echo: two" and len(asked) == 1 and oauth.stats()["exchanged"] == 1
    await again.stop()
