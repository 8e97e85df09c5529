"""An answer's status reaches the page after the text it is about: a page that reads "complete" holds the whole text.

NiceGUI sends a cycle's element updates before its messages, and the text travels as messages; these tests watch
every change of ``data-status`` in the browser and read the answer's text at that very moment.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import last_answer, send
from tests.support.tools import demo_tools_options
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream


@pytest.fixture(scope="module")
def app_options(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, ...]:
    """The demo tool server (stdio MCP): an answer in two steps, a tool call between them."""
    return demo_tools_options(tmp_path_factory.mktemp("status-order"))


WATCH = """() => {
  window.seenStatus = [];
  new MutationObserver((changes) => {
    for (const change of changes) {
      const answer = change.target;
      const body = answer.querySelector('.lc-body');
      window.seenStatus.push({status: answer.dataset.status, text: body ? body.innerText : ''});
    }
  }).observe(document.body, {subtree: true, attributes: true, attributeFilter: ['data-status']});
}"""

LONG_BLOCK = " ".join(f"word{n}" for n in range(1_200)) + " last-word"  # one paragraph over 4,000 characters


def statuses(page: Page) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = page.evaluate("window.seenStatus")
    return seen


def completed_text(page: Page) -> str:
    """The answer's text as the page showed it when its status first read "complete"."""
    seen = [s for s in statuses(page) if s["status"] == "complete"]
    assert seen, statuses(page)
    return str(seen[0]["text"])


def test_an_answer_sent_in_one_piece_reads_complete_only_with_its_text_shown(
    page: Page, upstream: ScriptedUpstream
) -> None:
    page.evaluate(WATCH)
    upstream.plan(Behavior(text="all of it at once", chunk_delay=0.0))
    send(page, "be quick")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    assert completed_text(page).split() == ["all", "of", "it", "at", "once"]


def test_a_paragraph_rendered_off_the_event_loop_is_on_the_page_before_the_answer_reads_complete(
    page: Page, upstream: ScriptedUpstream
) -> None:
    page.evaluate(WATCH)
    upstream.plan(Behavior(text=LONG_BLOCK, chunk_delay=0.0))
    send(page, "one long paragraph")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    words = completed_text(page).split()
    assert words[0] == "word0" and words[-1] == "last-word" and len(words) == 1_201


def test_an_edit_answered_at_once_reads_complete_only_with_its_text_shown(
    page: Page, upstream: ScriptedUpstream
) -> None:
    upstream.plan(Behavior(text="first answer", chunk_delay=0.0))
    send(page, "first question")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    page.evaluate(WATCH)
    upstream.plan(Behavior(text="answer to the edit", chunk_delay=0.0))
    first = page.locator(".lc-user").first
    first.get_by_role("button", name="Edit").click()
    first.get_by_label("Edit message").fill("first question, edited")
    first.get_by_role("button", name="Save").click()
    expect(last_answer(page)).to_contain_text("answer to the edit")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    assert completed_text(page).split() == ["answer", "to", "the", "edit"]


def test_an_answer_in_two_steps_reads_complete_only_with_its_first_steps_long_text_shown(
    page: Page, upstream: ScriptedUpstream
) -> None:
    page.evaluate(WATCH)
    upstream.plan(
        Behavior(text=LONG_BLOCK, chunk_delay=0.0, tool_calls=[PlannedCall("current_time", "{}", "call_t1")]),
        Behavior(text="Done.", chunk_delay=0.0),
    )
    send(page, "a long paragraph, then the time")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    words = completed_text(page).split()
    assert "last-word" in words and words[-1] == "Done.", words[-3:]
