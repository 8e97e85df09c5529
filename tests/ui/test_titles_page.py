"""Titles on the page (NiceGUI's simulated user, the real app with ``--titles model``, the scripted upstream): the
chat list, the header and a second tab show the generated title once it is in the ledger; the page never shows the
title attempt as a message or as a running answer."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from nicegui.testing import User

from tests.support.page import answers, elements, engine, listed, send
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until
from ui.chat_page import PAINTED

pytest_plugins = ["nicegui.testing.user_plugin"]


@pytest.fixture
def app_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, upstream: ScriptedUpstream) -> ScriptedUpstream:
    monkeypatch.setenv("LEDGERCHAT_MODEL", "openai/test-model")
    monkeypatch.setenv("LEDGERCHAT_API_BASE", upstream.base_url)
    monkeypatch.setenv("LEDGERCHAT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("LEDGERCHAT_TITLES", "model")  # the setting under test (the suite's default is off)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-page-0123456789abcdef")
    monkeypatch.setenv("LEDGERCHAT_ALLOWED_HOSTS", "test")  # the simulated user's requests name host "test"
    return upstream


def heading(user: User) -> str:
    (found,) = elements(user, marker="chat-title")
    return str(found.text)


async def test_the_list_and_the_header_show_the_title_the_model_gave_after_the_first_answer(
    app_env: ScriptedUpstream, user: User
) -> None:
    user.javascript_rules[re.compile(re.escape(PAINTED))] = lambda _: PAINTED  # as a browser answers the round trip
    await user.open("/")
    app_env.plan(Behavior(text="Caches keep results close."), Behavior(text='"Caching in Python."', chunk_delay=0.05))
    await send(user, "Tell me about caching in Python #slow")
    await wait_until(lambda: listed(user) == ["Caching in Python"], 20, "the generated title in the list")
    await wait_until(lambda: heading(user) == "Caching in Python", 5, "the generated title in the header")
    assert [a.status for a in answers(user)] == ["complete"], "the title is not a message of the chat"
    (summary,) = engine().summaries()
    conv = engine().conversation(summary.conversation_id)
    assert conv is not None and conv.title == "Caching in Python" and conv.live_attempt() is None
