"""Touch targets on a phone in real Chromium: every message button is at least 44 × 44 px (Apple's and WCAG's
enhanced target size) and none touches another, and a code block's Copy button never lies over its code."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Locator, Page, expect

from tests.support.app_process import AppProcess
from tests.support.browser import Pages, last_answer, send
from tests.support.upstream import Behavior, ScriptedUpstream

Box = Any  # a bounding box: x, y, width, height (Playwright's FloatRect, or the same from the page)
PHONE = {"width": 390, "height": 844, "touch": True}
ANSWER = "Here it is:\n\n```python\nprint('a line of code that is long enough to reach the right edge')\n```\n\nDone."
TARGET = 44


def boxes(buttons: Locator) -> list[Box]:
    found = [buttons.nth(n).bounding_box() for n in range(buttons.count())]
    assert all(found)
    return [box for box in found if box]


def apart(a: Box, b: Box, gap: float = 0.0) -> bool:
    """Whether two boxes are at least ``gap`` px apart, side by side or one above the other."""
    return bool(
        a["x"] + a["width"] + gap <= b["x"]
        or b["x"] + b["width"] + gap <= a["x"]
        or a["y"] + a["height"] + gap <= b["y"]
        or b["y"] + b["height"] + gap <= a["y"]
    )


def answered(open_page: Pages, app: AppProcess, upstream: ScriptedUpstream) -> Page:
    page = open_page(app, **PHONE)
    upstream.plan(Behavior(text=ANSWER, chunk_delay=0.0))
    send(page, "show me some code")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    return page


def test_every_message_button_is_a_finger_sized_target_apart_from_the_others(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    page = answered(open_page, app, upstream)
    for message, names in ((page.locator(".lc-user").last, ("Copy", "Edit", "Branch")),
                           (last_answer(page), ("Copy", "Audit", "Branch"))):  # fmt: skip
        buttons = message.get_by_role("button", name=list(names)[0], exact=True)
        for name in names[1:]:
            buttons = buttons.or_(message.get_by_role("button", name=name, exact=True))
        expect(buttons).to_have_count(len(names))
        found = boxes(buttons)
        for box in found:
            assert box["width"] >= TARGET and box["height"] >= TARGET, f"{names}: a target of {box}"
        for n, a in enumerate(found):
            assert all(apart(a, b, gap=2) for b in found[n + 1 :]), f"{names}: two targets touch: {found}"


def test_a_code_blocks_copy_button_lies_above_its_code_not_over_it(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    page = answered(open_page, app, upstream)
    copy = last_answer(page).get_by_role("button", name="Copy code")
    expect(copy).to_be_visible()
    button = copy.bounding_box()
    line = page.evaluate(  # the code's first line as laid out: every piece of text on it, from left to right
        """() => { const code = [...document.querySelectorAll('.lc-assistant pre code')].pop();
                   const range = document.createRange(); range.selectNodeContents(code);
                   const rects = [...range.getClientRects()]; const top = rects[0].y;
                   const line = rects.filter(r => Math.abs(r.y - top) < 2);
                   const left = Math.min(...line.map(r => r.x)), right = Math.max(...line.map(r => r.right));
                   return {x: left, y: top, width: right - left, height: rects[0].height}; }"""
    )
    assert button is not None and apart(button, line), f"Copy {button} lies over the code's first line {line}"
