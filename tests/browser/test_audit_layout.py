"""The audit panel at 1280 x 800 (issue 41, item 6): beside the chat, not over it (it takes the chat list's place);
long error lines wrap; it follows new answers."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.support.app_process import AppProcess
from tests.support.browser import Pages, answered, last_answer, send
from tests.support.tools import demo_tools_options
from tests.support.upstream import Behavior, ScriptedUpstream


@pytest.fixture(scope="module")
def app_options(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, ...]:
    """The demo tool server (stdio MCP): the sidebar lists its tools under the chats."""
    return demo_tools_options(tmp_path_factory.mktemp("audit-layout"))


BOX = "e => { const r = e.getBoundingClientRect(); return [r.left, r.right, r.top, r.bottom]; }"


def test_at_1280_px_the_audit_panel_sits_beside_the_chat_wraps_long_errors_and_follows_new_answers(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    page = open_page(app, width=1280, height=800)
    answered(page, upstream, "first", "An answer to first.")
    page.get_by_role("button", name="Audit panel").click()
    drawer = page.locator(".lc-audit-drawer")
    expect(drawer.locator(".lc-audit-card").first).to_be_visible()
    left_of_panel = drawer.evaluate(BOX)[0]
    for bubble in page.locator(".lc-user").all():  # the user's own messages stay in view, left of the panel
        assert bubble.evaluate(BOX)[1] <= left_of_panel + 1
    box = page.locator(".lc-footer textarea").evaluate(BOX)
    assert box[1] <= left_of_panel + 1, "the message box stays under the chat, left of the panel"

    upstream.plan(Behavior(status=400, message="no_such_parameter:" + "x" * 300))  # one long word
    send(page, "fail with a long line")
    expect(last_answer(page)).to_have_attribute("data-status", "failed")
    expect(drawer.get_by_text("no_such_parameter", exact=False).first).to_be_visible()
    cut = drawer.locator(".lc-phase .lc-meta").evaluate_all(
        "(all) => all.filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent.slice(0, 60))"
    )
    assert cut == [], f"cut lines: {cut}"

    for n in range(3):  # new answers: the panel's end stays in view
        answered(page, upstream, f"more {n}", f"An answer to more {n}.")
        last_card = drawer.locator(".lc-audit-card").last
        page.wait_for_function(
            "() => { const b = document.querySelector('.lc-audit-drawer');"
            " return b.scrollTop + b.clientHeight >= b.scrollHeight - 40; }"
        )
        expect(last_card).to_be_in_viewport()
