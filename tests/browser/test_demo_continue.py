"""Continue on the built-in demo model, as the tour shows it: the demo goes on with the text it was given (the
answer it had started, from where Stop cut it), not with a fresh answer about the request to continue."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from demo.answers import demo_answer
from demo.continuation import CONTINUE_REQUEST
from ledger.continuation_history import CONTINUE_INSTRUCTION
from tests.support.app_process import AppProcess
from tests.support.app_runner import AppRunner
from tests.support.browser import last_answer, send, wait_words

QUESTION = "Tell me about bulkheads"


@pytest.fixture(scope="module")
def app(run_app: AppRunner) -> Iterator[AppProcess]:
    """The app on its built-in demo model, a word every 0.1 s: Stop lands well before the answer's code block."""
    with run_app("--demo-chunk-delay", "0.1", demo_model=True) as process:
        yield process


def test_the_demo_model_recognises_the_apps_request_to_continue() -> None:
    assert CONTINUE_INSTRUCTION.startswith(CONTINUE_REQUEST)


def test_continue_on_the_demo_model_goes_on_with_the_answer_it_was_given_not_a_fresh_one(page: Page) -> None:
    full = demo_answer(QUESTION)
    paragraphs = full.split("\n\n")
    code = next(line for line in full.splitlines() if line.startswith("def check_"))
    send(page, QUESTION)
    wait_words(page, 8)
    page.get_by_role("button", name="Stop").click()
    answer = last_answer(page)
    expect(answer).to_have_attribute("data-status", "interrupted", timeout=30_000)
    expect(answer).not_to_contain_text(code)  # cut before its code block
    answer.get_by_role("button", name="Continue this answer").click()
    expect(answer).to_have_attribute("data-status", "complete", timeout=60_000)
    expect(answer).to_contain_text(code)  # the code block of the answer it had started
    expect(answer).to_contain_text(paragraphs[-1])  # and its own closing line
    body = answer.locator(".lc-body").inner_text()
    assert body.count("def check_") == 1, "a second, fresh answer followed the first"
    assert body.count(paragraphs[0]) == 1, "the answer started over"
