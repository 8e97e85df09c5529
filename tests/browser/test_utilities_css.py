"""The page's Tailwind utilities come from a committed stylesheet, ``ui/static/utilities.css``, not from Tailwind's
in-browser compiler: in Chromium, it is exactly what Tailwind makes for the classes ``ui/`` writes, and it applies
(that it covers them is checked without a browser, in ``tests/ui/test_utilities_css.py``)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Request

from tests.support.app_process import AppProcess
from tests.support.browser import Pages, load
from tests.support.utilities_css import (
    OUTPUT,
    REGENERATE,
    RUNTIME_CLASSES,
    compile_css,
    recorded_classes,
    stylesheet,
    used_classes,
)


def test_the_committed_stylesheet_is_exactly_what_tailwind_makes_for_those_classes(browser: Browser) -> None:
    committed = OUTPUT.read_text(encoding="utf-8")
    classes = recorded_classes(committed)
    assert classes == used_classes() | set(RUNTIME_CLASSES), REGENERATE
    assert committed == stylesheet(classes, compile_css(classes, browser)), REGENERATE


COMPOSER_ROW = """() => {
    const row = document.querySelector('.lc-footer .max-w-3xl'), box = row.getBoundingClientRect();
    const footer = row.parentElement, outer = footer.getBoundingClientRect(), style = getComputedStyle(footer);
    const left = outer.left + parseFloat(style.paddingLeft), right = outer.right - parseFloat(style.paddingRight);
    return {width: box.width, room: right - left, left: box.left - left, right: right - box.right};
}"""  # the composer's row (w-full max-w-3xl mx-auto) in the footer's content box


@pytest.fixture(scope="module")
def app_options() -> tuple[str, ...]:
    return ("--no-tools",)


def test_the_page_loads_no_tailwind_compiler_and_its_utility_classes_still_lay_it_out(
    open_page: Pages, app: AppProcess
) -> None:
    requests: list[Request] = []
    page = open_page(None, width=1280, height=860)
    page.on("request", lambda request: requests.append(request))
    load(page, app.url)
    urls = [r.url for r in requests]
    assert not [u for u in urls if "tailwind" in u], urls
    sheet = next(r for r in requests if "/lc-static/utilities.css" in r.url)
    response = sheet.response()
    assert response is not None and response.status == 200
    wide = page.evaluate(COMPOSER_ROW)
    assert wide["width"] == 768, wide  # max-w-3xl: 48rem
    assert abs(wide["left"] - wide["right"]) < 1 and wide["left"] > 100, wide  # mx-auto centres it
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_function("() => document.querySelector('.lc-footer .max-w-3xl').offsetWidth < 390")
    narrow = page.evaluate(COMPOSER_ROW)
    assert narrow["width"] == narrow["room"] and narrow["left"] == 0, narrow  # w-full: all its parent's content box
    font = page.evaluate("() => getComputedStyle(document.documentElement).fontFamily")
    assert font.startswith("ui-sans-serif"), font  # Tailwind's preflight (base layer) with its theme variables
