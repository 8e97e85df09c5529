"""The agent presets page and the chat's preset, with NiceGUI's simulated user against the scripted upstream: a
preset is created on its own page (a bad one is refused with every reason, keeping what was typed), a chat started
with it sends its instructions, Retry with another preset compares two attempts, and a stopped answer shows its
cost."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from nicegui import ui
from nicegui.testing import User

from tests.support.page import click, elements, engine, last_answer, send
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until
from ui.chat_page import PAINTED

pytest_plugins = ["nicegui.testing.user_plugin"]
WORDS = " ".join(f"w{n}" for n in range(300))


@pytest.fixture
def app_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, upstream: ScriptedUpstream) -> ScriptedUpstream:
    monkeypatch.setenv("LEDGERCHAT_MODEL", "openai/gpt-4o-mini")  # priced by litellm's map
    monkeypatch.setenv("LEDGERCHAT_API_BASE", upstream.base_url)
    monkeypatch.setenv("LEDGERCHAT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-presets-0123456789abcdef")
    monkeypatch.setenv("LEDGERCHAT_ALLOWED_HOSTS", "test")
    return upstream


def labelled(user: User, marker: str) -> ui.element:
    (found,) = elements(user, marker=marker)
    return found


async def test_a_preset_made_on_its_page_gives_a_new_chat_its_instructions_and_retry_compares_another(
    app_env: ScriptedUpstream, user: User
) -> None:
    upstream = app_env
    user.javascript_rules[re.compile(re.escape(PAINTED))] = lambda _: PAINTED
    await user.open("/presets")
    await click(user, "New preset")
    labelled(user, "preset-temperature").set_value(7)
    await click(user, "Save")
    errors = labelled(user, "preset-errors")
    assert errors.visible and "Name: a preset needs a name." in errors.text
    assert "Temperature: 7 is out of range" in errors.text
    labelled(user, "preset-name").set_value("Ada")
    labelled(user, "preset-temperature").set_value(None)
    labelled(user, "preset-instructions").set_value("You are Ada. Answer in French.")
    await click(user, "Save")
    (ada,) = [p for p in engine().presets.all() if p.name == "Ada"]
    assert ada.instructions == "You are Ada. Answer in French." and ada.version == 1
    await user.open(f"/?preset={ada.preset_id}")  # "Start a chat with it"
    upstream.plan(Behavior(text="Bonjour, je suis Ada."))
    await send(user, "hello")
    await wait_until(lambda: last_answer(user).status == "complete")
    assert upstream.last.messages[0] == {"role": "system", "content": "You are Ada. Answer in French."}
    user.find(marker="audit-toggle").click()  # the audit panel: what the model saw, from the ledger
    opener = await wait_until(lambda: elements(user, marker="model-saw-open"), 10, "the audit card")
    opener[0].set_value(True)
    shown = await wait_until(lambda: elements(user, marker="model-saw-message"), 10, "the messages sent")
    texts = [str(getattr(e, "text", "")) for m in shown for e in m.descendants()]
    assert "system" in texts and "You are Ada. Answer in French." in texts and "hello" in texts
    upstream.plan(Behavior(text="Hello, plain."))
    user.find(marker="retry-with-preset").click()
    user.find(marker="retry-preset-item").click()  # the one other preset: Default
    await wait_until(lambda: last_answer(user).attempt == "2/2" and last_answer(user).status == "complete")
    assert all(m["role"] != "system" for m in upstream.last.messages)  # the default preset has no instructions


async def test_a_stopped_answer_shows_its_cost_marked_as_estimated_and_the_header_the_chats(
    app_env: ScriptedUpstream, user: User
) -> None:
    upstream = app_env
    user.javascript_rules[re.compile(re.escape(PAINTED))] = lambda _: PAINTED
    await user.open("/")
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.02))
    await send(user, "count")
    await wait_until(lambda: len(last_answer(user).text) > 20)
    await click(user, "Stop")
    await wait_until(lambda: last_answer(user).status == "interrupted")
    await wait_until(lambda: any(re.search(r"~\$0\.\d+", m) for m in last_answer(user).markers), 10, "the cost")
    header = labelled(user, "chat-cost")
    assert header.visible and re.fullmatch(r"Chat: ~\$0\.\d+", header.text)
