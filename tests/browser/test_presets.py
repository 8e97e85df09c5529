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
    expect(page.get_by_role("alert").filter(has_text="Name: a preset")).to_contain_text("Name: a preset needs a name.")
    inline = page.locator(".q-field", has=page.get_by_label("Name")).get_by_text("a preset needs a name.", exact=True)
    expect(inline).to_be_visible()  # under the field it names, too
    page.get_by_label("Name").fill("Ada")
    expect(inline).not_to_be_visible()  # and gone once the field changed
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


def test_two_attempts_of_different_presets_say_which_made_each_and_compare_side_by_side(
    page: Page, upstream: ScriptedUpstream
) -> None:
    page.get_by_role("button", name="Agent presets").click()
    page.get_by_role("button", name="New preset").click()
    expect(page.get_by_label("Name")).to_have_value("")  # the new, empty form is shown
    page.get_by_label("Name").fill("Critic")
    page.get_by_label("Instructions").fill("Find the weak points.")
    page.get_by_role("button", name="Save the preset").click()
    expect(page.get_by_text("Critic · version 1")).to_be_visible()
    page.get_by_role("button", name="Back to the chats").click()
    expect(page.get_by_label("Message")).to_be_visible()
    upstream.plan(Behavior(text="The plan looks sound."))
    send(page, "review my plan")
    expect(last_answer(page)).to_have_attribute("data-status", "complete", timeout=TIMEOUT_MS)
    footer = last_answer(page).locator(".lc-meta").filter(has_text="test-model").first
    expect(footer).not_to_contain_text("Default")  # one attempt, the default preset: nothing to tell apart
    upstream.plan(Behavior(text="Three weak points: cost, time, people."))
    last_answer(page).get_by_role("button", name="Retry with another preset").click()
    page.get_by_text("Retry as Critic").click()
    expect(last_answer(page)).to_have_attribute("data-attempt", "2/2", timeout=TIMEOUT_MS)
    expect(last_answer(page)).to_have_attribute("data-status", "complete", timeout=TIMEOUT_MS)
    expect(footer).to_contain_text("Critic")
    last_answer(page).get_by_role("button", name="Previous attempt").click()
    expect(last_answer(page)).to_have_attribute("data-attempt", "1/2")
    expect(footer).to_contain_text("Default")
    last_answer(page).get_by_role("button", name="Compare attempts side by side").click()
    columns = page.get_by_role("dialog").locator(".lc-compare-cols > *")
    expect(columns).to_have_count(2)
    expect(columns.nth(0)).to_contain_text("Attempt 1 · Default")
    expect(columns.nth(0)).to_contain_text("The plan looks sound.")
    expect(columns.nth(1)).to_contain_text("Attempt 2 · Critic")
    expect(columns.nth(1)).to_contain_text("Three weak points: cost, time, people.")
    page.screenshot(path="/tmp/compare_presets.png")  # two presets side by side, for the closing note
    columns.nth(0).get_by_label("Left: attempt").click()  # either side shows any attempt
    page.get_by_role("option", name=re.compile("Attempt 2")).click()
    expect(columns.nth(0)).to_contain_text("Three weak points: cost, time, people.")
    expect(columns.nth(0)).not_to_contain_text("The plan looks sound.")
