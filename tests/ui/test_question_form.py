"""A url-mode question in the tool card, with NiceGUI's simulated user: the real app on the scripted upstream, a
small SDK server (``tests.support.question_server``, 2025-11-25) that asks the person to open a link."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from nicegui import ui
from nicegui.testing import User

from ledger.events.core import QuestionAnswered, QuestionAsked, ToolResult
from tests.support.page import engine, send
from tests.support.question_server import SIGN_IN_URL
from tests.support.tools import ROOT
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream
from tests.support.waiting import wait_until
from ui.chat_page import PAINTED

pytest_plugins = ["nicegui.testing.user_plugin"]


@pytest.fixture
def app_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, upstream: ScriptedUpstream) -> ScriptedUpstream:
    config = tmp_path / "tools.json"
    server = {
        "command": sys.executable,
        "args": ["-m", "tests.support.question_server"],
        "cwd": str(ROOT),
        "protocol": "2025-11-25",
        "approval": "run",  # an unannotated tool would wait for Run first (issue 22's default); this test is the link
    }
    config.write_text(json.dumps({"mcpServers": {"asker": server}}))
    monkeypatch.setenv("LEDGERCHAT_MODEL", "openai/test-model")
    monkeypatch.setenv("LEDGERCHAT_API_BASE", upstream.base_url)
    monkeypatch.setenv("LEDGERCHAT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("LEDGERCHAT_MCP_CONFIG", str(config))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-question-form-0123456789")
    monkeypatch.setenv("LEDGERCHAT_ALLOWED_HOSTS", "test")
    return upstream


async def test_a_url_question_shows_the_domain_and_a_link_only_the_person_opens_and_done_answers_accept(
    app_env: ScriptedUpstream, user: User
) -> None:
    user.javascript_rules[re.compile(re.escape(PAINTED))] = lambda _: PAINTED
    await user.open("/")
    app_env.plan(
        Behavior(text="", tool_calls=[PlannedCall("sign_in", "{}", "call_u")]), Behavior(text="Signed in, thanks.")
    )
    await send(user, "sign me in")
    the_engine = engine()
    cid = next(iter(the_engine.read.state.conversations))
    await wait_until(lambda: [e for e in the_engine.events(cid) if isinstance(e, QuestionAsked)], 20, "the question")
    await user.should_see("The tool asks you to open a page on login.example.com.")
    await user.should_see("Sign in to Example to continue.")
    (link,) = [e for e in user.find(ui.link).elements if e.props.get("href") == SIGN_IN_URL]
    assert link.props["rel"] == "noopener noreferrer"
    assert not [e for e in user.find(ui.button).elements if e.props.get("aria-label") == "Submit"]
    assert [e for e in user.find(ui.button).elements if e.props.get("aria-label") == "Decline"]
    user.find(marker="question-done").click()

    def results() -> list[ToolResult]:
        return [e for e in the_engine.events(cid) if isinstance(e, ToolResult)]

    (result,) = await wait_until(results, 20, "the tool's result")
    assert result.content == "sign in: accept"
    (answer,) = [e for e in the_engine.events(cid) if isinstance(e, QuestionAnswered)]
    assert (answer.action, answer.content, answer.by) == ("accept", None, "user")
    await user.should_see("Done: you went to the link.")
