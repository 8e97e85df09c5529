"""The page's Tailwind utilities come from a committed stylesheet, ``ui/static/utilities.css``: it was made from
every class ``ui/`` writes (the scan reads calls, f-strings, keywords, HTML and scripts) and has the rules the app
needs. That it is exactly what Tailwind makes, and that it applies, is checked in Chromium
(``tests/browser/test_utilities_css.py``)."""

from __future__ import annotations

from pathlib import Path

from tests.support.utilities_css import OUTPUT, REGENERATE, recorded_classes, used_classes


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
