"""In headless Chromium against the real app: a preset made on its page starts a chat whose answers follow its
instructions (the demo model answers in French as Ada), and a stopped answer shows what it cost (priced from
``--model-info``, marked ``~``: its tokens were counted locally), as does the chat's header."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import last_answer, send, wait_words
from tests.support.upstream import Behavior, ScriptedUpstream

TIMEOUT_MS = 20_000


@pytest.fixture(scope="module")
def app_options(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, ...]:
    path = tmp_path_factory.mktemp("model-info") / "models.json"
    prices = {"input_cost_per_token": 3e-6, "output_cost_per_token": 1.5e-5}
    path.write_text(json.dumps({"openai/test-model": prices}))
    return ("--model-info", str(path))


def test_a_preset_made_on_its_page_starts_a_chat_that_follows_its_instructions(
    page: Page, upstream: ScriptedUpstream
) -> None:
    page.get_by_role("button", name="Agent presets").click()
    expect(page).to_have_url(re.compile(r"/presets$"))
    page.get_by_role("button", name="New preset").click()
    expect(page.get_by_label("Name")).to_have_value("")  # the new, empty form replaced the default preset's
    page.get_by_role("button", name="Save the preset").click()
    expect(page.get_by_role("alert")).to_contain_text("Name: a preset needs a name.")
    page.get_by_label("Name").fill("Ada")
    page.get_by_label("Instructions").fill("You are Ada. Answer in French.")
    page.get_by_role("button", name="Save the preset").click()
    expect(page.get_by_text("Ada · version 1")).to_be_visible()
    page.get_by_role("button", name="Start a chat with this preset").click()
    expect(page).to_have_url(re.compile(r"/\?preset="))
    send(page, "tell me about caching")  # nothing planned: the demo model answers, following the instructions
    expect(last_answer(page)).to_have_attribute("data-status", "complete", timeout=TIMEOUT_MS)
    expect(last_answer(page).locator(".lc-body")).to_contain_text("Bonjour, je suis Ada.")
    assert upstream.last.messages[0] == {"role": "system", "content": "You are Ada. Answer in French."}
    send(page, "and about queues")  # the chat keeps its preset for the next answer
    expect(last_answer(page)).to_have_attribute("data-status", "complete", timeout=TIMEOUT_MS)
    assert upstream.last.messages[0]["role"] == "system"


def test_a_stopped_answer_shows_its_cost_marked_as_estimated_and_the_header_the_chats(
    page: Page, upstream: ScriptedUpstream
) -> None:
    upstream.plan(Behavior(text=" ".join(f"w{n}" for n in range(400)), chunk_delay=0.03))
    send(page, "count for me")
    wait_words(page, 10)
    page.get_by_role("button", name="Stop").click()
    expect(last_answer(page)).to_have_attribute("data-status", "interrupted", timeout=TIMEOUT_MS)
    expect(last_answer(page).locator(".lc-meta").filter(has_text=re.compile(r"~\$0\.\d+"))).to_have_count(1)
    expect(page.get_by_text(re.compile(r"^Chat: ~\$0\.\d+$"))).to_be_visible()
