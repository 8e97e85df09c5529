"""Writes ``ui/static/utilities.css``: the CSS Tailwind 4 makes for the classes the app uses, compiled once here
instead of in every page load (NiceGUI runs with ``tailwind=False``).

    python3.11 tasks.py utilities-css      # or: .venv/bin/python -m tests.support.utilities_css

Re-run it after adding a class to ``ui/`` (``tests/browser/test_utilities_css.py`` fails until you do). It loads
NiceGUI's own ``tailwindcss.min.js`` (the browser build the page used to run) in headless Chromium on a page whose
elements carry every class of ``used_classes`` plus ``RUNTIME_CLASSES``, with NiceGUI's layer order and dark variant,
and writes the stylesheet Tailwind injected: the theme variables it used, its preflight (base) and the utilities, in
Tailwind's cascade layers, followed by what NiceGUI puts in its ``overrides`` layer only with Tailwind on
(``headwind.css``), so the page looks as it did with the in-browser compiler.

Guarantees: ``used_classes`` finds every class token written in ``ui/*.py`` (string literals given to
``.classes(...)``, including f-strings' literal parts and ``add=``, and ``class="..."`` in HTML strings) and in
``ui/static/*.js`` (``className``, ``classList.add``, ``class="..."``), minus our own (``lc-*``), Quasar's
component classes (``q-*``) and NiceGUI's (``nicegui-*``); the stylesheet's header lists the classes it was made
from (``recorded_classes`` reads them back).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import nicegui

if TYPE_CHECKING:
    from playwright.sync_api import Browser

ROOT = Path(__file__).resolve().parents[2]
UI = ROOT / "ui"
OUTPUT = UI / "static" / "utilities.css"
TAILWIND_JS = Path(nicegui.__file__).parent / "static" / "tailwindcss.min.js"
# What NiceGUI adds to its ``overrides`` layer only with Tailwind on: it cancels Tailwind's ``rotate`` for Quasar's
# rotate-* classes (Quasar turns them with ``transform``; both together would turn its open-select arrow 360°).
HEADWIND = Path(nicegui.__file__).parent / "static" / "headwind.css"
LAYERS = "@layer theme, base, quasar, nicegui, components, utilities, overrides, quasar_importants;"
DARK_VARIANT = "@custom-variant dark (&:where(body.body--dark, body.body--dark *));"  # NiceGUI's index.html
OURS = ("lc-", "q-", "nicegui-")
# Classes Quasar's components put on their own elements that Tailwind also knows: the in-browser compiler saw them
# in the page and made rules for them, so the sheet keeps those rules (found by reading what Tailwind injected into
# the real app: empty page, a markdown answer, audit panel, tool cards running and done, rename and delete dialogs,
# search, model and retry menus, a tooltip, a failed answer, a notification, dark mode, a phone).
RUNTIME_CLASSES = (
    *("absolute", "fixed", "block", "flex", "inline", "hidden", "cursor-pointer", "text-white", "rotate-180"),
    *("items-stretch", "justify-center", "justify-start", "self-stretch"),
)
REGENERATE = "run `python3.11 tasks.py utilities-css` to re-make ui/static/utilities.css"  # what a failing test says
HEADER = "/* Made by tests/support/utilities_css.py from the classes below; do not edit, re-run it. */\n"
CLASSES_LINE = "/* classes: {} */\n"
_HTML_CLASS = re.compile(r"""class(?:Name)?\s*=\s*["'`]([^"'`]*)["'`]""")
_JS_ADD = re.compile(r"""classList\.(?:add|toggle)\(\s*["'`]([^"'`]*)["'`]""")
_HOLE = "\0"
_CLASS = re.compile(r"-?[a-z][\w\-\[\]%.:/#()]*")  # a class name (not a regex's ``[nwp]``), no f-string hole


def used_classes(root: Path = UI) -> set[str]:
    """Every class token ``ui/`` writes (see the module docstring), ours, Quasar's and NiceGUI's left out."""
    tokens: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        tokens |= _python_classes(ast.parse(path.read_text(encoding="utf-8"), str(path)))
    for path in sorted((root / "static").glob("*.js")):
        text = path.read_text(encoding="utf-8")
        for match in (*_HTML_CLASS.finditer(text), *_JS_ADD.finditer(text)):
            tokens |= set(match.group(1).split())
    return {t for t in tokens if _CLASS.fullmatch(t) and not t.startswith(OURS)}


def _python_classes(tree: ast.AST) -> set[str]:
    tokens: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "classes":
            for arg in (*node.args, *(k.value for k in node.keywords)):
                for text in _literal_texts(arg):
                    tokens |= set(text.split())
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            for match in _HTML_CLASS.finditer(node.value):
                tokens |= set(match.group(1).split())
    return tokens


def _literal_texts(node: ast.AST) -> list[str]:
    """The string literals inside an expression; an f-string's holes become ``_HOLE`` (a token with one is
    dropped: only its literal neighbours count)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return ["".join(str(v.value) if isinstance(v, ast.Constant) else _HOLE for v in node.values)]
    return [text for child in ast.iter_child_nodes(node) for text in _literal_texts(child)]


def recorded_classes(css: str) -> set[str]:
    """The classes a generated stylesheet was made from (its second line)."""
    match = re.search(r"^/\* classes: (.*) \*/$", css, re.MULTILINE)
    return set(match.group(1).split()) if match else set()


def compile_css(classes: set[str], browser: Browser | None = None) -> str:
    """What NiceGUI's Tailwind browser build injects into a page whose elements carry ``classes`` (in ``browser``,
    else in a headless Chromium of its own)."""
    if browser is None:
        from playwright.sync_api import sync_playwright

        from tests.support.app_process import CHROMIUM_ARGS

        with sync_playwright() as p:
            chromium = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            try:
                return compile_css(classes, chromium)
            finally:
                chromium.close()
    divs = "".join(f'<div class="{c}"></div>' for c in sorted(classes))
    html = (
        f"<!doctype html><html><head><style>{LAYERS}</style>"
        f'<style type="text/tailwindcss">{DARK_VARIANT}</style></head><body>{divs}</body></html>'
    )
    page = browser.new_page()
    try:
        page.set_content(html)
        page.add_script_tag(path=str(TAILWIND_JS))
        made = "[...document.querySelectorAll('style:not([type])')].find(s => s.textContent.includes('tailwindcss'))"
        page.wait_for_function(f"!!({made})")
        css: str = page.evaluate(f"({made}).textContent")
    finally:
        page.close()
    return css


def stylesheet(classes: set[str], css: str) -> str:
    """The file's text: the header naming the classes, Tailwind's CSS, then NiceGUI's headwind overrides."""
    headwind = HEADWIND.read_text(encoding="utf-8").strip().replace("\n", "\n  ")
    classes_line = CLASSES_LINE.format(" ".join(sorted(classes)))
    return f"{HEADER}{classes_line}{css.rstrip()}\n@layer overrides {{\n  {headwind}\n}}\n"


def write(path: Path = OUTPUT) -> Path:
    classes = used_classes() | set(RUNTIME_CLASSES)
    path.write_text(stylesheet(classes, compile_css(classes)), encoding="utf-8")
    return path


if __name__ == "__main__":
    print(f"wrote {write().relative_to(ROOT)}", file=sys.stderr)
