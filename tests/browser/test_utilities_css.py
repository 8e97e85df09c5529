"""The page's Tailwind utilities come from a committed stylesheet, ``ui/static/utilities.css``, not from Tailwind's
in-browser compiler: it covers every class ``ui/`` writes, it is what Tailwind makes for them, and it applies."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Request, expect

from tests.support.app_process import AppProcess
from tests.support.utilities_css import OUTPUT, RUNTIME_CLASSES, compile_css, recorded_classes, stylesheet, used_classes

REGENERATE = "run `python3.11 tasks.py utilities-css` to re-make ui/static/utilities.css"
needs_chromium = pytest.mark.skipif(
    not shutil.which("chromium"), reason="Debian chromium is not installed (tasks.py installs it)"
)


def test_every_class_written_in_ui_is_one_the_stylesheet_was_made_from() -> None:
    missing = used_classes() - recorded_classes(OUTPUT.read_text(encoding="utf-8"))
    assert not missing, (
        f"classes in ui/ that ui/static/utilities.css was not made from: {sorted(missing)}; {REGENERATE}"
    )


def test_the_scan_finds_classes_in_calls_f_strings_keywords_html_and_scripts_but_not_our_own(tmp_path: Path) -> None:
    (tmp_path / "static").mkdir()
    (tmp_path / "widget.py").write_text(
        "def build(ui, state):\n"
        "    ui.label('x').classes('mt-3 lc-meta q-pa-md nicegui-row')\n"
        "    ui.icon('y').classes(f'lc-tool-{state} p-2 ring-{state}')\n"
        "    ui.row().classes(add='mx-1' if state else None, remove='lc-current')\n"
        "    ui.column().classes('w-full' + (' whitespace-pre-wrap' if state else ''))\n"
        "    ui.html('<span class=\"underline lc-typing\">x</span>')\n"
        "    return 'text-lg'  # not a class: no .classes() and no class attribute\n"
    )
    (tmp_path / "static" / "page.js").write_text("el.classList.add('italic'); b.className = 'lc-copy-code shadow';\n")
    found = used_classes(tmp_path)
    assert found == {"mt-3", "p-2", "mx-1", "w-full", "whitespace-pre-wrap", "underline", "italic", "shadow"}


def test_the_app_classes_that_need_a_rule_have_one_in_the_stylesheet() -> None:
    css = OUTPUT.read_text(encoding="utf-8")
    for rule in (".w-full {", ".max-w-3xl {", ".mx-auto {", ".gap-2 {", ".max-w-\\[85\\%\\] {", ".hidden {"):
        assert rule in css, rule
    assert "@layer base {" in css and "--spacing: 0.25rem;" in css, "preflight and theme variables are kept"


@pytest.mark.browser
@needs_chromium
def test_the_committed_stylesheet_is_exactly_what_tailwind_makes_for_those_classes(browser: object) -> None:
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
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    process = AppProcess(tmp_path_factory.mktemp("utilities") / "data", None, "--no-tools").start()
    yield process
    process.stop()


@pytest.mark.browser
@needs_chromium
def test_the_page_loads_no_tailwind_compiler_and_its_utility_classes_still_lay_it_out(
    browser: object, app: AppProcess
) -> None:
    requests: list[Request] = []
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    context.on("request", lambda request: requests.append(request))
    page = context.new_page()
    page.goto(app.url)
    expect(page.get_by_label("Message")).to_be_visible()
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
