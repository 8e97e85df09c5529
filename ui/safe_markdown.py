"""Markdown for untrusted model output, and the block splitter that lets finished paragraphs freeze.

Guarantees:
- ``MarkdownBlock`` escapes every raw HTML tag (it shows as text), turns ``javascript:``/``data:`` links into
  ``#`` (markdown2 ``safe_mode='escape'``), and keeps NiceGUI's client-side DOMPurify pass as a second layer.
  It is a ``ui.html`` element: an update carries the rendered HTML and ~90 bytes of framing (``ui.markdown``
  adds ~200 more per update, which dominates a streamed answer's traffic).
- ``split_blocks(text)`` cuts text at blank lines outside fenced code blocks; joining the blocks with blank
  lines gives back the same rendering, and every block but the last is finished (it can never change again
  while text is only appended).
"""

from __future__ import annotations

import re
from functools import lru_cache

import markdown2
from nicegui import ui
from pygments.formatters import HtmlFormatter

EXTRAS = ("fenced-code-blocks", "tables", "code-friendly", "target-blank-links")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


class MarkdownBlock(ui.html):
    """One block of untrusted markdown, rendered on the server with raw HTML escaped."""

    def __init__(self, markdown: str = "") -> None:
        self.markdown = markdown
        super().__init__(render(markdown), sanitize=True)
        self.classes("nicegui-markdown lc-md")

    def set_markdown(self, markdown: str) -> None:
        if markdown != self.markdown:
            self.markdown = markdown
            self.set_content(render(markdown))


def code_css() -> str:
    """Pygments styles for highlighted code, light and dark (added once per page)."""
    light: str = HtmlFormatter(nobackground=True).get_style_defs(".codehilite")
    dark: str = HtmlFormatter(nobackground=True, style="github-dark").get_style_defs(".body--dark .codehilite")
    return light + dark


@lru_cache(maxsize=2048)
def render(content: str) -> str:
    html: str = markdown2.markdown(content, extras=list(EXTRAS), safe_mode="escape")
    return html


def split_blocks(text: str) -> list[str]:
    """Blocks separated by blank lines, never splitting a fenced code block; the last may still grow."""
    blocks: list[str] = []
    current: list[str] = []
    in_fence = False
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
        is_last = number == len(lines) - 1
        if not in_fence and line.strip() == "" and not is_last and current and _next_is_new_block(lines, number):
            blocks.append("\n".join(current))
            current = []
            continue
        current.append(line)
    blocks.append("\n".join(current))
    return blocks


def _next_is_new_block(lines: list[str], number: int) -> bool:
    """A blank line ends a block unless the next line continues a list item (indented)."""
    following = next((line for line in lines[number + 1 :] if line.strip()), None)
    return following is None or not following.startswith((" ", "\t"))
