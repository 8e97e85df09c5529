"""What a person reads on the page when each provider refuses: the provider's own sentence with its error type
and the HTTP status it sent (Anthropic's 529 as 529), never a bytes literal or JSON (NiceGUI's simulated user,
the real app on the scripted upstream speaking each dialect)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from nicegui.testing import User

from tests.support.dialects import DIALECTS, MODELS, OVERLOADED, api_base
from tests.support.page import last_answer, send
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until
from ui.assistant_message import FILTERED
from ui.chat_page import PAINTED

pytest_plugins = ["nicegui.testing.user_plugin"]
KEYS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY"}
SAID = {
    "openai": "The engine is currently overloaded, please try again later (server_error, HTTP 503).",
    "anthropic": "Overloaded (overloaded_error, HTTP 529).",
    "gemini": "The model is overloaded. Please try again later (UNAVAILABLE, HTTP 503).",
    "ollama": "server busy, please try again. maximum pending requests exceeded (HTTP 503).",
}


@pytest.fixture(params=DIALECTS)
def dialect(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, upstream: ScriptedUpstream
) -> str:
    name = str(request.param)
    monkeypatch.setenv("LEDGERCHAT_MODEL", MODELS[name])
    monkeypatch.setenv("LEDGERCHAT_API_BASE", api_base(name, upstream))
    monkeypatch.setenv("LEDGERCHAT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("LEDGERCHAT_MAX_RESENDS", "0")
    monkeypatch.setenv(KEYS.get(name, "OLLAMA_API_KEY"), "sk-test-page-0123456789abcdef")
    monkeypatch.setenv("LEDGERCHAT_ALLOWED_HOSTS", "test")
    return name


async def test_an_overloaded_provider_reads_as_its_own_sentence_with_the_status_it_sent(
    dialect: str, upstream: ScriptedUpstream, user: User
) -> None:
    user.javascript_rules[re.compile(re.escape(PAINTED))] = lambda _: PAINTED
    await user.open("/")
    upstream.plan(Behavior(status=OVERLOADED[dialect]))
    await send(user, "hi")
    await wait_until(lambda: last_answer(user).status == "failed", 20, "the answer to fail")
    markers = last_answer(user).markers
    assert f"Provider error (HTTP {OVERLOADED[dialect]})" in markers
    assert f"The provider had a server error: {SAID[dialect]}" in markers
    page = json.dumps([str(getattr(el, "text", "")) for el in user.client.elements.values()])
    assert "b'" not in page and '{\\"' not in page and "Exception" not in page


async def test_an_answer_the_providers_safety_filter_ended_says_so(
    dialect: str, upstream: ScriptedUpstream, user: User
) -> None:
    if dialect == "ollama":
        pytest.skip("Ollama has no safety filter")
    user.javascript_rules[re.compile(re.escape(PAINTED))] = lambda _: PAINTED
    await user.open("/")
    upstream.plan(Behavior(text="The first part", blocked=True))
    await send(user, "hi")
    await wait_until(lambda: last_answer(user).status == "complete", 20, "the answer to end")
    assert last_answer(user).text == "The first part" and FILTERED in last_answer(user).markers


@pytest.fixture
def anthropic_resending(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, upstream: ScriptedUpstream) -> None:
    monkeypatch.setenv("LEDGERCHAT_MODEL", MODELS["anthropic"])
    monkeypatch.setenv("LEDGERCHAT_API_BASE", api_base("anthropic", upstream))
    monkeypatch.setenv("LEDGERCHAT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("LEDGERCHAT_MAX_RESENDS", "1")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-page-0123456789abcdef")
    monkeypatch.setenv("LEDGERCHAT_ALLOWED_HOSTS", "test")


async def test_while_a_resend_waits_out_the_providers_retry_after_the_page_says_why_and_how_long(
    anthropic_resending: None, upstream: ScriptedUpstream, user: User
) -> None:
    user.javascript_rules[re.compile(re.escape(PAINTED))] = lambda _: PAINTED
    await user.open("/")
    upstream.plan(Behavior(status=429, retry_after=1.5), Behavior(text="after the wait"))
    await send(user, "hi")
    note = await wait_until(
        lambda: [m for m in last_answer(user).markers if m.startswith("Re-sending.")], 10, "the re-send note"
    )
    assert "(rate_limit_error, HTTP 429). It asked to wait 1.5 s." in note[0]
    await wait_until(lambda: last_answer(user).status == "complete", 20, "the re-sent answer")
    assert last_answer(user).text == "after the wait"
    assert not [m for m in last_answer(user).markers if m.startswith("Re-sending.")]
