"""A completed answer renders exactly the text received; the growing tail never shows a character it was not sent.

"Visible" is defined as follows. Whitespace is layout and is not compared. The visible characters of a render are
its text content (tags dropped, entities decoded). The render must be the source with only *markers* taken out: the
characters of markdown syntax (``MARKERS``) and a link's target (``](…)``: any target is the link's address, never
its text), and only where the construct they belong to really rendered. So nothing is added (no twin backtick, no
closing ``__``) and nothing that is not syntax is dropped; and where no construct renders at all, the visible text
is exactly the source's. A math span that renders (as ``ui.markdown.math`` finds it) is MathML, not its source's
characters: it counts as one character (``MATH``) on both sides.
"""

from __future__ import annotations

import re
from functools import cache
from html import unescape

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ui.markdown.math import protect
from ui.markdown.safe import render_blocks, split_blocks
from ui.markdown.tail import render_tail

MARKERS = frozenset("*_`~#>-+[]()!$")  # $: math delimiters (a rendered span shows its MathML)
LINK_TARGET = "](https://a.example)"
TOKENS = st.sampled_from(
    ["alpha", "beta", "self.__x", "self.__secret", "name-mangled.", "__init__", "mangled.__", "x_y", "a & b", "<b>",
     "$5", "$ 10", "**", "*", "__", "_", "`", "~~", " ", " ", " ", "\n", "\n\n", "- ", "# ", "> ", "[", "]",
     LINK_TARGET, "https://x.example/p", "(", ")", "!", "+"]
)  # fmt: skip
EXACT = [  # (received, what shows): the markers of what really renders go, every other character stays
    ("Python: self.__secret is name-mangled.", "Python: self.__secret is name-mangled."),
    ("An answer ending in self.__x", "An answer ending in self.__x"),
    ("A lone ` backtick, and ``two`` of them.", "A lone ` backtick, and two of them."),
    ("An *unmatched star and __an unmatched dunder", "An *unmatched star and __an unmatched dunder"),
    ("**bold** with a trailing **", "bold with a trailing **"),
    ("a ~~ b and `", "a ~~ b and `"),
    ("costs $5 and $10, x <b", "costs $5 and $10, x <b"),
]
_TAG = re.compile(r"<[^>]*>")
_TARGET = re.compile(r"\]\([^()]*\)")  # ``](target)`` of a link (any target: the sanitizer may drop it, never shows it)


MATH = "\x00"
_MATH_ELEMENT = re.compile(r"<math\b.*?</math>", re.DOTALL)


def visible(html: str) -> str:
    return "".join(unescape(_TAG.sub("", _MATH_ELEMENT.sub(MATH, html))).split())


def received(text: str) -> str:
    """The source with each span that renders as math as one ``MATH`` character."""
    protected, math = protect(text)
    for key, (source, mathml) in math.spans.items():
        protected = protected.replace(key, MATH if mathml is not None else source)
    return protected


def only_markers_taken_out(source: str, shown: str) -> bool:
    """Whether ``shown`` is ``source`` (whitespace dropped from both) with only markers deleted."""
    s, r = "".join(source.split()), shown

    @cache
    def fits(i: int, j: int) -> bool:
        if i == len(s):
            return j == len(r)
        if j < len(r) and s[i] == r[j] and fits(i + 1, j + 1):
            return True
        if (target := _TARGET.match(s, i)) is not None and fits(target.end(), j):  # a link's target: its href
            return True
        return s[i] in MARKERS and fits(i + 1, j)

    return fits(0, 0)


def html_of(text: str) -> str:
    return "".join(render_blocks(text))


@pytest.mark.parametrize(("text", "shown"), EXACT)
def test_the_explicit_examples_show_exactly_the_text_received_less_the_markers_that_render(
    text: str, shown: str
) -> None:
    assert visible(html_of(text)) == "".join(shown.split())


@settings(deadline=None, max_examples=300)
@given(st.lists(TOKENS, max_size=40).map("".join))
@example("Python: self.__secret is name-mangled.")
@example("a ` b")
@example("an *unmatched and **unmatched")
@example("[alpha](https://a.example) and https://x.example/p.")
def test_a_completed_answer_shows_the_source_with_only_rendered_markers_taken_out(text: str) -> None:
    assert only_markers_taken_out(received(text), visible(html_of(text))), html_of(text)


@settings(deadline=None, max_examples=200)
@given(st.lists(TOKENS, max_size=30).map("".join), st.integers(0, 400))
@example("Python: self.__secret is name-mangled.", 38)
@example("use `search_no", 14)
@example("alpha**[](", 10)
def test_the_growing_tail_never_shows_a_character_that_was_not_received(text: str, cut: int) -> None:
    prefix = text[:cut]
    tail = split_blocks(prefix)[-1]
    shown = visible(render_tail(tail))
    # a link target still being written is a marker; closing may turn what looked like math into code: either reading
    writing = [re.sub(r"(\[[^\[\]\n]*\])\([^()\s]*$", r"\1", t) for t in (received(tail), tail)]
    writing += [received(tail), tail]  # or shown as written, its target's start included ("alpha**[](")
    assert any(only_markers_taken_out(t, shown) for t in writing), render_tail(tail)


@settings(deadline=None, max_examples=150)
@given(st.lists(TOKENS, max_size=30).map("".join))
@example("$5`$ 10")  # closing the cut code span turns what looked like math into code: either reading, as in the tail
def test_an_answer_cut_short_closes_its_markup_only_where_nothing_shows_that_was_not_received(text: str) -> None:
    shown = visible("".join(render_blocks(text, cut=True)))
    assert any(only_markers_taken_out(t, shown) for t in (received(text), text))


def test_a_half_written_bold_tail_shows_bold_and_a_dunder_tail_stays_as_written() -> None:
    assert "<strong>Test the</strong>" in render_tail("1. **Test the")
    assert visible(render_tail("self.__secret is name-mangled.")) == "self.__secretisname-mangled."
    assert "<code>search_no</code>" in render_tail("use `search_no")


def test_math_task_lists_and_bare_links_render_in_finished_blocks() -> None:
    html = html_of(
        "Euler: $e^{i\\pi} + 1 = 0$, \\(a^2\\), costs $5 and $10.\n\n$$\\frac{a}{b}$$\n\n- [x] done\n- [ ] open"
    )
    assert html.count("<math") == 3 and 'display="block"' in html and "<mfrac>" in html
    assert "costs $5 and $10." in html
    boxes = re.findall(r"<input [^>]*>", html)
    assert len(boxes) == 2 and all('type="checkbox"' in b and 'disabled=""' in b for b in boxes)
    assert 'checked=""' in boxes[0] and 'aria-label="done"' in boxes[0]
    assert 'checked=""' not in boxes[1] and 'aria-label="not done"' in boxes[1]
    link = html_of("see https://example.org/a_(b)_c. and `https://not.linked`")
    assert '<a href="https://example.org/a_(b)_c" target="_blank" rel="noopener noreferrer">' in link
    assert "<code>https://not.linked</code>" in link and link.count("<a ") == 1
