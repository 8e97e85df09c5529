"""The prompts ("/") and resources ("@") of the remote servers a person adds from the Tools panel, through that
person's own connection (``engine.tools.remote_context``): against the demo tool server and the second SDK server
(``tests.support.context_server``) over real streamable HTTP, and a server behind a real OAuth authorization
server (``tests.support.oauth_upstream``) for the sign-in the menus cannot ask for."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from engine.tools import AppHub, Changer, FetchFailed, RemoteServers, prompts, remote_context, resources
from engine.tools.asking import Question
from engine.tools.resource_watch import keyed
from store.blobs import MemoryBlobs
from tests.engine.test_remote_oauth import servers as oauth_servers
from tests.engine.test_remote_oauth import signing_in
from tests.support.mcp_http import serve_http
from tests.support.oauth_upstream import OAuthUpstream
from tests.support.remote import team_servers
from tests.support.waiting import wait_until

ADA, BO = Changer("local:ada", True), Changer("local:bo", True)
COUNTER = "counter://second/visits"


@pytest.fixture(scope="module")
def demo_url() -> Iterator[str]:
    yield from serve_http("demo.tools_server")


@pytest.fixture(scope="module")
def second_url() -> Iterator[str]:
    yield from serve_http("tests.support.context_server")


@pytest.fixture
async def hub() -> AsyncIterator[AppHub]:
    """The app's hub without configured servers, over the remote servers of a team (as ``app.parts`` wires it)."""
    remote = team_servers()
    app_hub = AppHub((), remote)
    remote.watch = app_hub.watch
    await app_hub.start()
    yield app_hub
    await app_hub.stop()


async def test_a_connected_personal_server_offers_its_prompts_and_resources_to_its_person_alone(
    hub: AppHub, demo_url: str
) -> None:
    remote = hub.remote
    assert remote is not None
    await remote.add(ADA, "mine", demo_url)
    ada, bo = remote_context.for_person(hub, ADA.person), remote_context.for_person(hub, BO.person)
    assert await prompts.prompts(ada) == ()  # added, not connected: nothing listed, nothing started by listing
    assert remote.connection_of(ADA.person, "mine") == (None, False)

    await remote.connect(ADA.person, "mine", None)  # as the Tools panel's Connect
    listed = {(p.server, p.name) for p in await prompts.prompts(ada)}
    assert listed == {("mine", "summarize_notes"), ("mine", "standup")}
    found = {(r.server, r.uri or r.template) for r in await resources.resources(ada)}
    assert ("mine", "notes://demo/notes.md") in found and ("mine", "notes://demo/section/{topic}") in found

    got = await prompts.get(ada, "mine", "summarize_notes", {"topic": "retries"})
    assert got.text.startswith("Summarize the notes on retries as bullets:")
    (piece,) = await resources.read(ada, "mine", "notes://demo/notes.md")
    assert piece.text and piece.media_type == "text/markdown" and len(piece.data) > 100
    assert "bullets" in await prompts.complete(ada, "mine", ("prompt", "summarize_notes"), "style", "bu")

    # another person of the team: never sees, reads or starts ada's personal server
    assert all(p.server != "mine" for p in await prompts.prompts(bo))
    assert all(r.server != "mine" for r in await resources.resources(bo))
    with pytest.raises(FetchFailed, match="not running"):
        await resources.read(bo, "mine", "notes://demo/notes.md")
    with pytest.raises(FetchFailed):
        await prompts.get(bo, "mine", "standup", {})
    assert await prompts.complete(bo, "mine", ("prompt", "summarize_notes"), "style", "bu") == ()
    assert await remote_context.reach(bo) == {}
    assert remote.connection_of(BO.person, "mine") == (None, False)

    # a conversation of ada's (the ACP bridge's "/server.prompt" commands) reaches it too; one of bo's does not
    hub.owner_of = lambda cid: ADA.person if cid == "ada-chat" else BO.person
    assert {p.server for p in await prompts.prompts(hub.of_chat("ada-chat"))} == {"mine"}
    assert await prompts.prompts(hub.of_chat("bo-chat")) == ()


async def test_a_remote_resource_is_watched_under_its_persons_own_connection(hub: AppHub, second_url: str) -> None:
    remote = hub.remote
    assert remote is not None
    await remote.add(ADA, "ctx", second_url)
    await remote.add(BO, "ctx", second_url)  # the same name is bo's own too (personal servers of two people)
    ada, bo = remote_context.for_person(hub, ADA.person), remote_context.for_person(hub, BO.person)
    assert await remote_context.reach(ada) == {}  # it needs no sign-in: started without asking anyone
    assert await remote_context.reach(bo) == {}
    key = remote_context.watch_key(ada, "ctx")
    assert key == keyed("ctx", ADA.person) != remote_context.watch_key(bo, "ctx")

    await resources.read(ada, "ctx", COUNTER)  # an "@" attach: the server is asked to tell of changes
    await wait_until(lambda: hub.watch.how.get(key), what="the server asked through ada's connection")
    assert hub.watch.watched(key) == {COUNTER}
    assert hub.watch.watched(keyed("ctx", BO.person)) == frozenset()  # bo's connection is never asked about it

    await remote.call(ADA.person, "ctx", "visit", {}, None, None)
    await wait_until(lambda: hub.watch.changed(key, COUNTER), what="ada's resource marked changed")
    assert not hub.watch.changed(keyed("ctx", BO.person), COUNTER) and not hub.watch.changed("ctx", COUNTER)
    await resources.read(ada, "ctx", COUNTER)  # a Refresh: the mark goes
    assert not hub.watch.changed(key, COUNTER)


async def test_a_server_that_needs_a_sign_in_is_named_to_the_menus_and_asks_nobody(
    tmp_path: Path, oauth: OAuthUpstream
) -> None:
    remote = await oauth_servers(tmp_path, oauth.url)
    view = remote_context.for_person(AppHub((), remote), None)
    try:
        assert await remote_context.reach(view) == {
            "notes": remote_context.SIGN_IN
        }  # no token: one line "Sign in to notes ..."
        assert oauth.stats()["exchanged"] == 0 and remote.connection_of(None, "notes") == (None, False)
        asked: list[Question] = []
        await remote.connect(None, "notes", signing_in(remote, oauth, asked))  # the Tools panel's Connect
        assert await remote_context.reach(view) == {} and [s.name for s in remote_context.live(view)] == ["notes"]
    finally:
        await remote.stop()

    restarted = RemoteServers(remote.store, remote.vault, MemoryBlobs(), redirect_uri=remote.redirect_uri)
    await restarted.load()
    view = remote_context.for_person(AppHub((), restarted), None)
    try:  # after a restart: the person's tokens start it, nobody is asked
        assert await remote_context.reach(view) == {}
        assert [s.name for s in remote_context.live(view)] == ["notes"] and len(asked) == 1
    finally:
        await restarted.stop()


async def test_a_menu_waits_for_a_server_that_does_not_answer_a_bounded_time_and_says_it_is_still_connecting(
    hub: AppHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = hub.remote
    assert remote is not None
    monkeypatch.setattr(remote_context, "REACH_SECONDS", 0.5)
    silent = await asyncio.start_server(lambda reader, writer: None, "127.0.0.1", 0)  # accepts, never answers
    try:
        port = silent.sockets[0].getsockname()[1]
        await remote.add(ADA, "silent", f"http://127.0.0.1:{port}/mcp")
        ada = remote_context.for_person(hub, ADA.person)
        assert await remote_context.reach(ada) == {"silent": remote_context.STARTING}
        assert remote.connection_of(ADA.person, "silent")[1], "its start goes on after the menu stopped waiting"
        assert await remote_context.reach(ada) == {"silent": remote_context.STARTING}  # never a second start
    finally:
        silent.close()
