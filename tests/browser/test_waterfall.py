"""The audit panel's waterfall of a stopped answer, in a real browser: its cancel marker, and a replay that ends on
exactly the tokens the interrupted message holds."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.support.browser import last_answer, open_audit, send, wait_words, watch_unchanged
from tests.support.upstream import Behavior, ScriptedUpstream

STORY = " ".join(f"w{n}" for n in range(600))


def test_the_waterfall_of_a_stopped_answer_marks_the_stop_and_its_replay_ends_on_the_interrupted_tokens(
    page: Page, upstream: ScriptedUpstream
) -> None:
    upstream.plan(Behavior(text=STORY, chunk_delay=0.02))
    send(page, "count slowly")
    wait_words(page, 10)
    page.get_by_role("button", name="Stop").click()
    expect(last_answer(page)).to_have_attribute("data-status", "interrupted")
    seen = len(watch_unchanged(page, 0.5))
    open_audit(page)
    page.get_by_test_id("waterfall-open").last.click()
    view = page.get_by_test_id("waterfall").last
    expect(view.locator("canvas").first).to_be_visible()  # ECharts, served by the app itself
    expect(view.get_by_test_id("waterfall-stop")).to_contain_text(re.compile(r"Stop \(user\) at .*upstream closed"))
    sentence = view.get_by_test_id("replay-stop")
    expect(sentence).to_have_text(
        f"At this moment {seen} tokens were on the screen; the interrupted message holds {seen}."
    )
    counter = view.get_by_test_id("replay-counter")
    expect(counter).to_contain_text(re.compile(r"^0 tokens on the screen"))
    view.get_by_role("button", name="Replay at 10×").click()
    # the replay's end: the answer's last event, a moment after Stop (or, on a loaded machine, the same moment)
    expect(counter).to_contain_text(re.compile(rf"^{seen} tokens on the screen .* (after|at) Stop$"), timeout=15_000)
    words = r"\s+".join(f"w{n}" for n in range(seen))  # the text follows the counter (a frame later when busy)
    expect(view.get_by_test_id("replay-text")).to_have_text(re.compile(rf"^\s*{words}\s*$"))
    box = view.get_by_role("slider").bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 1, box["y"] + box["height"] / 2)  # the cursor taken back by hand: nothing shown yet
    expect(counter).to_contain_text(re.compile(r"^0 tokens"))
    view.get_by_role("button", name="Go to the moment Stop was pressed").click()
    expect(counter).to_contain_text(re.compile(rf"^{seen} tokens on the screen"))


def test_the_replay_shows_the_answer_rendered_as_the_user_saw_it_not_its_markdown_source(
    page: Page, upstream: ScriptedUpstream
) -> None:
    upstream.plan(Behavior(text="A **bold claim** and `some code`.\n\n" + STORY, chunk_delay=0.02))
    send(page, "mark it up")
    wait_words(page, 20)
    page.get_by_role("button", name="Stop").click()
    expect(last_answer(page)).to_have_attribute("data-status", "interrupted")
    open_audit(page)
    page.get_by_test_id("waterfall-open").last.click()
    view = page.get_by_test_id("waterfall").last
    view.get_by_role("button", name="Go to the moment Stop was pressed").click()
    screen = view.get_by_test_id("replay-text")
    expect(screen.locator("strong")).to_have_text("bold claim")
    expect(screen.locator("code")).to_have_text("some code")
    assert "**" not in screen.inner_text() and "`" not in screen.inner_text()
