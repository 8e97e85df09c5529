"""Spend limits on the page, with NiceGUI's simulated user against the real test upstream (``--spend-limit`` and
``--model-info`` prices): a Send over the limit is refused with the figure and the reset time and its text stays in
the box (no message submitted, no request made); the usage page shows what was spent, by day, model and status,
with the limit; the CSV download holds every attempt."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from nicegui.testing import User

from tests.support.page import elements, last_answer, send
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until
from ui.chat_page import PAINTED

pytest_plugins = ["nicegui.testing.user_plugin"]
MODEL = "openai/spend-page-test"  # priced here only: no other test's model gets a price
SENTENCE = "You have spent $0.02 of your $0.015 daily limit; it resets at 00:00 UTC."


@pytest.fixture
def priced_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, upstream: ScriptedUpstream) -> ScriptedUpstream:
    info = tmp_path / "models.json"
    info.write_text(json.dumps({MODEL: {"input_cost_per_token": 1e-5, "output_cost_per_token": 0.0}}))
    monkeypatch.setenv("LEDGERCHAT_MODEL", MODEL)
    monkeypatch.setenv("LEDGERCHAT_MODEL_INFO", str(info))
    monkeypatch.setenv("LEDGERCHAT_SPEND_LIMIT", "$0.015/day")
    monkeypatch.setenv("LEDGERCHAT_TITLES", "off")
    monkeypatch.setenv("LEDGERCHAT_API_BASE", upstream.base_url)
    monkeypatch.setenv("LEDGERCHAT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-spend-0123456789abcdef")
    monkeypatch.setenv("LEDGERCHAT_ALLOWED_HOSTS", "test")
    return upstream


def box(user: User) -> str:
    return str(user.find("Message").elements.pop().value or "")


async def test_a_send_over_the_limit_says_the_figure_and_the_reset_time_and_the_text_stays_in_the_box(
    priced_env: ScriptedUpstream, user: User
) -> None:
    user.javascript_rules[re.compile(re.escape(PAINTED))] = lambda _: PAINTED
    await user.open("/")
    priced_env.plan(Behavior(text="the first answer", input_tokens=2000))  # $0.02: the limit is reached
    await send(user, "first question")
    await wait_until(lambda: last_answer(user).status == "complete", 10, "the first answer")
    user.find("Message").type("second question")
    user.find("Message").trigger("keydown.enter.exact.prevent")
    await user.should_see(SENTENCE, retries=100)
    assert box(user) == "second question", "the text stays in the box"
    assert len(elements(user, marker="user-message")) == 1, "no message submitted"
    assert len(priced_env.records) == 1, "no request made"

    await user.open("/usage")
    await user.should_see(marker="usage-limit")
    limit = user.find(marker="usage-limit").elements.pop().text
    assert (
        limit == "Your limit: $0.015/day. Spent today: $0.020; this month: $0.020. Days and months start at 00:00 UTC."
    )
    (line,) = elements(user, marker="usage-lines")[0].default_slot.children[:1]
    assert [c.text for c in line.default_slot.children if hasattr(c, "text")][1:3] == [MODEL, "complete"]
    response = await user.http_client.get("/usage.csv")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv")
    header, *rows = response.text.splitlines()
    assert header.startswith("started,day,person,conversation_id,attempt_id,model,purpose,status")
    assert len(rows) == 1 and ",answer,complete,2000," in rows[0] and rows[0].endswith(",0.02000000,,")
