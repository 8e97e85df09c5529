"""The new user's path to a cut stream: the built-in demo model (mounted in the app, the light route) and its
``#drop`` tag. The app's own server ends the demo's body cleanly when it drops, without the end marker, exactly as
a proxy's idle timeout ends a provider's stream: the page must say Connection lost, keep the words it showed,
mark them not in context, and answer in full on Retry (the demo's fault hits the first try only)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.support.app_process import AppProcess
from tests.support.app_runner import AppRunner
from tests.support.browser import last_answer, open_audit, send, visible_words


@pytest.fixture(scope="module")
def app(run_app: AppRunner) -> Iterator[AppProcess]:
    """The app on its built-in demo model (offline, OpenAI's dialect at /demo on the app's own port)."""
    with run_app("--demo-chunk-delay", "0.005", demo_model=True) as process:
        yield process


def test_the_demos_drop_is_a_lost_connection_kept_out_of_context_and_retry_answers_in_full(page: Page) -> None:
    send(page, "Tell me about bulkheads #drop")
    answer = last_answer(page)
    expect(answer).to_have_attribute("data-status", "failed", timeout=30_000)
    expect(answer).to_contain_text("Connection lost")
    expect(answer).to_contain_text("not in context")
    cut = visible_words(page)
    assert 20 <= len(cut) <= 30, cut  # the demo cuts after 25 chunks (a word each)
    answer.get_by_role("button", name="Retry").click()
    expect(answer).to_have_attribute("data-status", "complete", timeout=30_000)
    assert len(visible_words(page)) > len(cut)
    expect(answer).not_to_contain_text("Connection lost")
    open_audit(page)  # the cut attempt, as the ledger holds it: failed, 25 chunks, then the whole answer
    cards = page.locator(".lc-audit-card")
    expect(cards).to_have_count(2)
    expect(cards.first).to_contain_text(re.compile(r"status failed · 25 chunks"))
    expect(cards.last).to_contain_text("status complete")
