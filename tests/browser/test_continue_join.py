"""Continue across a stop inside bold, in real Chromium: the paragraph the stop cut and its continuation render as
one markdown text while the continuation streams and once it is finished (the continuation's ``**`` closes the
prefix's, no literal ``**`` shows), with the join marked above that paragraph."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.support.browser import last_answer, send
from tests.support.upstream import Behavior, ScriptedUpstream
from ui.continued_view import JOIN_WITHIN

SHOT = "/tmp/continue_bold.png"
LIVE = (
    "() => { const a = [...document.querySelectorAll('.lc-assistant')].pop();"
    " const s = [...a.querySelectorAll('.lc-body strong')].find(e => e.innerText.includes('bold words'));"
    " return s ? { status: a.dataset.status, text: a.querySelector('.lc-body').innerText } : null; }"
)


def test_continue_across_bold_renders_one_markdown_text_live_and_finished(
    page: Page, upstream: ScriptedUpstream
) -> None:
    upstream.plan(Behavior(text="Some intro.\n\nThe **bold wor", cut=True, chunk_delay=0.0))  # the output limit
    send(page, "say something bold")
    answer = last_answer(page)
    expect(answer).to_have_attribute("data-status", "complete")
    upstream.plan(
        Behavior(text="ds** end here, and then " + "more " * 80, chunk_delay=0.1)
    )  # 8 s: room on a busy machine
    answer.get_by_role("button", name="Continue this answer").click()
    live = page.wait_for_function(LIVE).json_value()  # the first moment the bold shows closed
    assert live["status"] == "streaming", "the continuation ended before the live check: no test"
    assert "**" not in live["text"], live["text"]
    expect(answer).to_have_attribute("data-status", "complete", timeout=30_000)  # 80 words 0.1 s apart, busy
    body = answer.locator(".lc-body")
    expect(body.locator("strong")).to_have_text("bold words")
    assert "**" not in body.inner_text()
    expect(body).to_contain_text("The bold words end here, and then more")
    expect(answer.get_by_role("note", name=JOIN_WITHIN)).to_be_visible()
    answer.scroll_into_view_if_needed()
    page.screenshot(path=SHOT)
