"""Remote tool servers: who may add and change them, a team deployment without a token key, a server that needs no
sign-in, and what a sign-in that ends says (the server refused it; its sign-in page could not be reached)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from engine.tools import Changer, Question, QuestionAnswer, RemoteRefused, SignInEnded
from engine.tools.vault import NO_KEY
from tests.support.mcp_http import serve_http
from tests.support.oauth_upstream import OAuthUpstream
from tests.support.remote import team_servers
from tests.support.waiting import wait_until

ADMIN, ADA, BO = Changer("local:root", True, True), Changer("local:ada", True), Changer("local:bo", True)


async def test_team_servers_are_added_by_an_admin_and_personal_ones_are_their_persons_alone() -> None:
    remote = team_servers()
    with pytest.raises(RemoteRefused, match="Only an admin adds a server for the whole team"):
        await remote.add(ADA, "wiki", "https://wiki.example/mcp", team_server=True)
    await remote.add(ADMIN, "wiki", "https://wiki.example/mcp", team_server=True)
    await remote.add(ADA, "mine", "https://ada.example/mcp")
    with pytest.raises(RemoteRefused, match="is there already"):
        await remote.add(BO, "wiki", "https://other.example/mcp")
    with pytest.raises(RemoteRefused, match="is there already"):  # a team name must be nobody's already
        await remote.add(ADMIN, "mine", "https://team.example/mcp", team_server=True)
    await remote.add(BO, "mine", "https://bo.example/mcp")  # a personal name is only its person's
    with pytest.raises(RemoteRefused, match="streamable-HTTP URL"):
        await remote.add(BO, "local", "file:///etc/passwd")
    assert [s.name for s in remote.visible(ADA.person)] == ["wiki", "mine"]
    assert [s.name for s in remote.visible(BO.person)] == ["wiki", "mine"]
    with pytest.raises(RemoteRefused, match="Only an admin changes"):
        await remote.enable(ADA, "wiki", False)
    await remote.remove(BO, "mine")  # his own: Ada's of the same name stays
    assert [s.url for s in remote.visible(ADA.person) if s.name == "mine"] == ["https://ada.example/mcp"]
    with pytest.raises(RemoteRefused, match="no server named 'mine'"):
        await remote.remove(BO, "mine")
    await remote.enable(ADA, "mine", False)
    assert not remote.named(ADA.person, "mine").enabled
    await remote.remove(ADMIN, "wiki")
    assert remote.visible(BO.person) == []


async def test_without_a_token_key_a_team_deployment_refuses_to_keep_a_sign_in_and_says_why(
    oauth: OAuthUpstream,
) -> None:
    remote = team_servers(key=None)
    await remote.add(ADMIN, "notes", oauth.url, team_server=True)
    asked: list[Question] = []

    async def ask(question: Question) -> QuestionAnswer:
        asked.append(question)
        return QuestionAnswer("cancel")

    with pytest.raises(SignInEnded) as ended:
        await remote.call(ADA.person, "notes", "echo", {"text": "x"}, None, ask)
    assert NO_KEY in str(ended.value) and asked == []  # nobody is sent to a sign-in that could not be kept
    await remote.stop()


async def test_a_sign_in_the_server_refuses_says_so_with_its_error_code(oauth: OAuthUpstream) -> None:
    remote = team_servers()
    await remote.add(ADA, "notes", oauth.url)

    async def refuse(question: Question) -> QuestionAnswer:
        query = await oauth.authorize(question.url)
        taken, words = remote.signins.arrive({"state": query["state"], "error": "access_denied"}, ADA.person)
        assert taken and words.startswith("notes refused the sign-in: access_denied")
        assert question.done is not None
        return QuestionAnswer(await question.done)

    with pytest.raises(SignInEnded) as ended:
        await remote.call(ADA.person, "notes", "echo", {"text": "x"}, None, refuse)
    assert ended.value.status == "declined" and str(ended.value) == "notes refused the sign-in: access_denied"
    await remote.stop()


async def test_a_sign_in_someone_else_brings_back_is_not_taken(oauth: OAuthUpstream) -> None:
    remote = team_servers()
    await remote.add(ADA, "notes", oauth.url)
    seen: list[str] = []

    async def ask(question: Question) -> QuestionAnswer:
        query = await oauth.authorize(question.url)
        taken, words = remote.signins.arrive(query, BO.person)
        seen.append(words)
        assert not taken
        remote.signins.arrive(query, ADA.person)
        assert question.done is not None
        return QuestionAnswer(await question.done)

    outcome = await remote.call(ADA.person, "notes", "echo", {"text": "x"}, None, ask)
    assert outcome.text == "echo: x" and seen == ["This sign-in was started by someone else."]
    await remote.stop()


async def test_a_sign_in_page_that_cannot_be_reached_is_named_as_such() -> None:
    upstream = OAuthUpstream(ttl=3)
    remote = team_servers()
    await remote.add(ADA, "notes", upstream.url)

    async def ask(question: Question) -> QuestionAnswer:
        remote.signins.arrive(await upstream.authorize(question.url), ADA.person)
        assert question.done is not None
        return QuestionAnswer(await question.done)

    await remote.call(ADA.person, "notes", "echo", {"text": "x"}, None, ask, read_only=True)
    upstream.stop()  # the authorization server (and the tool server) go away
    signed = time.time()
    await wait_until(lambda: time.time() > signed + 3, timeout=10)  # the token is due for its refresh
    with pytest.raises(SignInEnded) as ended:
        await remote.call(ADA.person, "notes", "echo", {"text": "y"}, None, ask, read_only=True)
    assert (
        str(ended.value)
        == f"notes's sign-in page could not be reached (127.0.0.1:{upstream.port}) while refreshing the token"
    )
    await remote.stop()


async def test_a_server_that_needs_no_sign_in_is_called_without_asking(tmp_path: Path) -> None:
    server = serve_http("demo.tools_server")  # a blocking start: before this test's loop has work
    url = next(server)
    try:
        remote = team_servers()
        await remote.add(ADA, "demo", url)
        tools = await remote.connect(ADA.person, "demo", None)
        assert "calculator" in {t.name for t in tools}
        outcomes = await asyncio.gather(
            *(remote.call(ADA.person, "demo", "calculator", {"expression": f"{n}+1"}, None, None) for n in range(3))
        )
        assert [o.text for o in outcomes] == ["0+1 = 1", "1+1 = 2", "2+1 = 3"]
        await remote.stop()
    finally:
        server.close()
