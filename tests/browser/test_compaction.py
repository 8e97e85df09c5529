"""The context meter and compaction in a real browser: the app on the scripted upstream with a 400-token window
declared by ``--model-info`` (litellm's model-map shape), Debian's Chromium via Playwright."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import last_answer, send
from tests.support.upstream import Behavior, ScriptedUpstream

WINDOW = 400


@pytest.fixture(scope="module")
def app_options(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, ...]:
    path: Path = tmp_path_factory.mktemp("model-info") / "models.json"
    path.write_text(json.dumps({"openai/test-model": {"max_input_tokens": WINDOW}}))
    return ("--model-info", str(path))


def used(page: Page) -> int:
    meter = page.locator("[data-used]")
    expect(meter).to_be_visible()
    return int(meter.get_attribute("data-used") or 0)


def answered(page: Page) -> None:
    expect(last_answer(page)).to_have_attribute("data-status", "complete", timeout=15_000)


def test_the_meter_moves_after_an_answer_and_a_message_that_would_not_fit_is_sent_after_a_summary(
    page: Page, upstream: ScriptedUpstream
) -> None:
    upstream.plan(Behavior(text="A short first answer."))
    send(page, "first question")
    answered(page)
    meter = page.get_by_text(f"/ {WINDOW} tokens")
    expect(meter).to_be_visible()
    first = used(page)
    upstream.plan(Behavior(text="The long story goes on. " * 50, chunk_delay=0.005))
    send(page, "tell me the long story")
    answered(page)
    page.wait_for_function("n => Number(document.querySelector('[data-used]').dataset.used) > n", arg=first)
    second = used(page)
    assert first < second <= WINDOW
    expect(page.locator(".lc-meter-warn")).to_be_visible()  # over 80% of the window: a warning
    expect(page.get_by_role("button", name="Compact: summarize earlier turns")).to_be_visible()

    summary = "**Earlier turns**\n\n- The user asked: first question\n- A long story was told."
    upstream.plan(Behavior(text=summary), Behavior(text="The story ends."))
    send(page, "And one more question: " + "what happened next in the story? " * 12)  # does not fit: summary first
    divider = page.locator(".lc-compaction")
    expect(divider).to_have_attribute("data-status", "complete")
    expect(divider.get_by_text("Earlier turns summarized")).to_be_visible()
    answered(page)
    divider.get_by_text("Summary", exact=True).click()
    expect(divider.locator(".lc-compaction-title")).to_have_text("Earlier turns summarized")
    expect(page.get_by_text("The user asked: first question")).to_be_visible()
    expect(divider.locator("strong", has_text="Earlier turns")).to_be_visible()  # rendered, as answers are
    expect(divider.locator("li")).to_have_count(2)
    expect(divider).not_to_contain_text("**")
    expect(page.get_by_text("The long story goes on.").first).to_be_visible()  # the screen keeps every message
    page.wait_for_function("n => Number(document.querySelector('[data-used]').dataset.used) < n", arg=WINDOW)
    summary_request, answer_request = upstream.records[-2:]
    assert str(summary_request.messages[0]["content"]).startswith("Summarize the earlier conversation below")
    assert answer_request.messages[0]["role"] == "system" and answer_request.status == 200
    divider.get_by_role("button", name="Audit").click()
    expect(page.get_by_text("Summary of earlier turns · Turn").first).to_be_visible()  # its own audit entry


def test_a_context_length_error_shows_the_providers_sentence_and_compact_and_retry_answers(
    page: Page, upstream: ScriptedUpstream
) -> None:
    upstream.plan(Behavior(text="A short first answer.", chunk_delay=0.005))
    send(page, "first question")
    answered(page)
    send(page, "a question the provider finds too long #toolong")
    answer = last_answer(page)
    expect(answer).to_have_attribute("data-status", "failed")
    expect(answer.get_by_text("The conversation is too long for this model")).to_be_visible()
    expect(answer.get_by_text("maximum context length is 2000 tokens", exact=False)).to_be_visible()
    answer.get_by_role("button", name="Compact and retry").click()
    expect(page.locator(".lc-compaction")).to_have_attribute("data-status", "complete")
    answered(page)
    expect(last_answer(page)).to_have_attribute("data-attempt", "2/2")
    assert upstream.records[-1].status == 200 and upstream.records[-1].messages[0]["role"] == "system"
