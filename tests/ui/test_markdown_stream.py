"""The stream's server side: blocks found incrementally are the blocks of the whole text, and a block's markup
plus ranges of its own text give back its rendered HTML (what the browser rebuilds)."""

from __future__ import annotations

import re
from html import unescape

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.markdown_parts import rebuilt
from ui.markdown.safe import BlockSplitter, html_parts, render, split_blocks

LINES = st.sampled_from(
    ["", " ", "text", "**bold** and `code`", "- item", "  continued", "```", "```python", "~~~", "x = 1 < 2 & 3",
     "\tindented", "# Title", "| a | b |", "😀 astral", "&amp; entity"]
)  # fmt: skip


def nodes(html: str) -> list[str]:
    """Tags as written, text as the DOM holds it."""
    return [piece if piece.startswith("<") else unescape(piece) for piece in re.split(r"(<[^>]*>)", html) if piece]


@settings(deadline=None)
@given(st.lists(LINES, max_size=25), st.lists(st.integers(1, 9), min_size=1, max_size=40))
def test_blocks_found_while_the_text_grows_are_the_blocks_of_the_whole_text(lines: list[str], steps: list[int]) -> None:
    text = "\n".join(lines)
    splitter, found, shown = BlockSplitter(), [], 0
    for step in steps * (len(text) // max(sum(steps), 1) + 1):
        shown = min(len(text), shown + step)
        found += [text[a:b] for a, b in splitter.feed(text[:shown])]
    found += [text[a:b] for a, b in splitter.feed(text)]
    assert [*found, text[splitter.start :]] == split_blocks(text)


@settings(deadline=None)
@given(st.lists(LINES, max_size=12))
def test_a_blocks_markup_and_ranges_of_its_text_give_back_its_rendered_html(lines: list[str]) -> None:
    for block in split_blocks("\n".join(lines)):
        html = render(block)
        assert nodes(rebuilt(block, html_parts(block, html))) == nodes(html)


def test_a_plain_paragraph_costs_a_few_bytes_over_its_text() -> None:
    text = " ".join(f"word{n}" for n in range(2000))
    assert html_parts(text, render(text)) == ["<p>", [0, len(text)], "</p>\n"]
