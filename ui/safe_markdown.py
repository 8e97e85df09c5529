"""Markdown for untrusted model output, and the block splitter that lets finished paragraphs freeze.

Guarantees:
- ``SafeMarkdown`` escapes every raw HTML tag (it shows as text), turns ``javascript:``/``data:`` links into
  ``#`` (markdown2 ``safe_mode='escape'``), and keeps NiceGUI's client-side DOMPurify pass as a second layer.
- ``split_blocks(text)`` cuts text at blank lines outside fenced code blocks; joining the blocks with blank
  lines gives back the same rendering, and every block but the last is finished (it can never change again
  while text is only appended).
"""

from __future__ import annotations

import re
from functools import lru_cache

import markdown2
from nicegui import ui

EXTRAS = ("fenced-code-blocks", "tables", "code-friendly", "target-blank-links")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


class SafeMarkdown(ui.markdown):
    """``ui.markdown`` that never lets raw HTML or script links from the model through."""

    def __init__(self, content: str = "") -> None:
        super().__init__(content, extras=list(EXTRAS), sanitize=True)

    def _handle_content_change(self, content: str) -> None:
        html = render(content)
        if self._props.get("innerHTML") != html:
            self._props["innerHTML"] = html


@lru_cache(maxsize=2048)
def render(content: str) -> str:
    return str(markdown2.markdown(content, extras=list(EXTRAS), safe_mode="escape"))


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
