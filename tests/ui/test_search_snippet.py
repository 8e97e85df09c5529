"""A search result's snippet: plain words around the match, the query's words marked, nothing of the line markup."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ui.search_snippet import WIDTH, plain, snippet_html


def test_markdown_reads_as_its_words_and_a_snake_case_name_keeps_its_underscores() -> None:
    line = "> - **Steel** _bulkheads_ and `my_var` in [the manual](https://example.com) ![a ship](x.png) ~~old~~"
    assert plain(line) == "Steel bulkheads and my_var in the manual a ship old"
    assert plain("## 3. Heading *here*") == "Heading here"


def test_every_occurrence_of_each_word_is_marked_whatever_its_case() -> None:
    html = snippet_html("Keep the ship afloat; KEEP it afloat.", ["keep", "afloat"])
    assert html == (
        '<mark class="lc-hit">Keep</mark> the ship <mark class="lc-hit">afloat</mark>; '
        '<mark class="lc-hit">KEEP</mark> it <mark class="lc-hit">afloat</mark>.'
    )


def test_a_match_far_into_a_long_line_is_shown_in_a_window_around_it() -> None:
    line = "word " * 300 + "bulkheads hold " + "tail " * 100
    html = snippet_html(line, ["bulkheads"])
    assert html.startswith("…") and html.endswith("…")
    assert '<mark class="lc-hit">bulkheads</mark>' in html
    assert len(html.replace('<mark class="lc-hit">', "").replace("</mark>", "")) <= WIDTH + 2


@given(st.text(max_size=400), st.lists(st.text(min_size=1, max_size=5), max_size=3))
def test_nothing_of_the_line_becomes_markup(line: str, words: list[str]) -> None:
    html = snippet_html(line, words)
    stripped = html.replace('<mark class="lc-hit">', "").replace("</mark>", "")
    assert "<" not in stripped and ">" not in stripped
