"""Issue 42 item 1: rendering untrusted text cannot fail, cannot go deeper than a bound and costs time linear in the
text: deep nesting and the families that made markdown2 quadratic render fast, as escaped-safe HTML, and a
renderer that fails or runs out of time shows that one message as written, with a note."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from html import unescape

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.support.xss import CORPUS, DANGEROUS_TAGS, Findings
from ui.markdown import engine as markdown_engine
from ui.markdown import safe as safe_markdown
from ui.markdown.math import MATH_TAGS
from ui.markdown.safe import ALLOWED, CACHE, FAILED, OVERTIME, render, render_blocks, render_fresh
from ui.markdown.tail import render_tail

FAMILIES: dict[str, Callable[[int], str]] = {  # n characters (about) of each kind of input that explodes somewhere
    "open links": lambda n: "[a](" * (n // 4),
    "backticks": lambda n: "`" * n,
    "deep quote": lambda n: ">" * n + " deep quote",
    "deep list": lambda n: "\n".join(" " * (2 * i) + "- x" for i in range(int((n / 1.2) ** 0.5))),
    "flat deep list": lambda n: "- " * (n // 2) + "x",
    "brackets": lambda n: "[" * n,
    "stars": lambda n: "*a " * (n // 3),
    "nested stars": lambda n: "*a " * (n // 6) + "b" + " a*" * (n // 6),
    "images": lambda n: "![a](" * (n // 5),
    "display math": lambda n: "\\[" * (n // 2) + "\\]",
    "inline math": lambda n: "\\(" * (n // 2) + "\\)",
    "dollars": lambda n: "$a" * (n // 2),
    "ticks and pairs": lambda n: "`a``" * (n // 4),
    "table pipes": lambda n: "|a" * (n // 2) + "\n|-|\n" + "|b" * (n // 4),
    "angle brackets": lambda n: "<a" * (n // 2),
    "quote and list": lambda n: "> - " * (n // 4) + "x",
    "bare urls": lambda n: "https://." * (n // 9) + "x https://a. " * (n // 26),
    "strike": lambda n: "~~a" * (n // 3),
    "setext": lambda n: "a\n=\n" * (n // 4),
    "entities": lambda n: "&#" * (n // 2),
    "references": lambda n: "[a]: " * (n // 5),
    "fences": lambda n: "```\n" * (n // 4),
}
SAFE_TAGS = ALLOWED | MATH_TAGS
LIMIT = 100_000


def seconds_allowed(text: str) -> float:
    """A linear bound on the rendering thread's CPU time (other processes on a shared machine do not count): ~8x
    the worst measured cost per KB (``bench/render_bench.py``)."""
    return 0.5 + 60e-6 * len(text)


def assert_safe(html: str) -> None:
    found = Findings(html)
    assert not found.handlers, found.handlers
    assert not found.bad_urls, found.bad_urls
    assert not set(found.tags) & (DANGEROUS_TAGS - {"math"}), found.tags
    assert set(found.tags) <= SAFE_TAGS, set(found.tags) - SAFE_TAGS


def timed(render_it: Callable[[str], str], text: str) -> str:
    began = time.thread_time()
    html = render_it(text)
    spent = time.thread_time() - began
    assert spent < seconds_allowed(text), f"{spent:.2f} s for {len(text)} characters"
    return html


PATHOLOGICAL = st.builds(lambda kind, n: FAMILIES[kind](n), st.sampled_from(sorted(FAMILIES)), st.integers(1, LIMIT))
MIXED = st.lists(
    st.one_of(st.text(max_size=200), st.sampled_from(CORPUS), PATHOLOGICAL.map(lambda t: t[:5_000])), max_size=12
).map("\n".join)


@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.one_of(st.text(max_size=2_000), PATHOLOGICAL, MIXED))
@example(">" * 250 + " deep quote")
@example(FAMILIES["deep list"](60_000))
@example(FAMILIES["open links"](LIMIT))
@example(FAMILIES["backticks"](LIMIT))
def test_render_and_render_tail_of_any_text_return_safe_html_within_a_linear_bound_and_never_raise(text: str) -> None:
    text = text[:LIMIT]
    assert_safe(timed(render_fresh, text))
    assert_safe(timed(render_tail, text))


@pytest.mark.parametrize("kind", sorted(FAMILIES))
def test_each_pathological_family_costs_about_the_same_per_character_at_5k_and_100k(kind: str) -> None:
    def per_char(n: int) -> float:
        text = FAMILIES[kind](n)
        best = min(_spent(render_fresh, text) for _ in range(2))  # the better of two: another process may be busy
        return best / len(text)

    small, large = per_char(5_000), per_char(LIMIT)
    assert large < 4 * small + 2e-6, f"{kind}: {small * 1e6:.2f} µs/char at 5k, {large * 1e6:.2f} at 100k"


def _spent(render_it: Callable[[str], str], text: str) -> float:
    """The rendering thread's CPU time (the collector's full passes included: they grow the cost ~2x from 5k to
    100k, then it stays flat)."""
    began = time.thread_time()
    render_it(text)
    return time.thread_time() - began


def visible(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]*>", " ", html)).split())


def test_a_quote_nested_250_deep_shows_its_words_and_its_deepest_levels_as_text() -> None:
    html = render(">" * 250 + " deep quote")
    assert html.count("<blockquote>") == markdown_engine.NESTING
    assert visible(html) == ">" * (250 - markdown_engine.NESTING) + " deep quote"


def test_a_list_nested_220_deep_keeps_every_item_and_goes_no_deeper_than_the_bound() -> None:
    text = "\n".join(" " * (2 * i) + f"- item{i}" for i in range(220))
    html = render(text)
    assert html.count("<ul>") == markdown_engine.NESTING // 2
    assert [int(n) for n in re.findall(r"item(\d+)", visible(html))] == list(range(220))


def test_emphasis_nested_deeper_than_the_bound_shows_its_markers_as_text() -> None:
    html = render("*a " * 100 + "b" + " a*" * 100)
    assert html.count("<em>") == markdown_engine.NESTING
    assert visible(html).count("*") == 2 * (100 - markdown_engine.NESTING)


def test_a_renderer_failure_shows_that_message_escaped_as_written_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(text: str, deadline: float) -> str:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(safe_markdown, "parse", explode)
    text = "A **bold** <img src=x onerror=alert(1)> line\nand a second"
    html = render_fresh(text)
    assert FAILED in html and "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "**bold**" in html and "and a second" in html
    assert_safe(html)
    assert "".join(render_blocks(text)) == html  # a finished answer goes the same way: never an exception


def test_a_render_past_its_deadline_shows_the_text_as_written_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(safe_markdown, "DEADLINE", -1.0)
    html = render_fresh("# Title\n\nwords and `code`")
    assert OVERTIME in html and "# Title" in html and "`code`" in html and "<h1>" not in html


def test_a_render_cut_short_on_a_busy_machine_is_not_kept_so_the_next_open_tries_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def busy(text: str, deadline: float) -> str:  # the deadline passed while another process had the CPU
        raise markdown_engine.Overtime

    monkeypatch.setattr(safe_markdown, "parse", busy)
    text = "# Title\n\nwords past the deadline on a busy machine"
    assert OVERTIME in render(text) and text not in CACHE
    monkeypatch.undo()
    assert "<h1>Title</h1>" in render(text) and text in CACHE


def test_a_finished_answer_of_any_size_is_rendered_once_and_then_served_by_its_hash() -> None:
    text = "Some **words** and a [link](https://example.org). " * 2_000  # ~100 KB: over the old 4,000-character cache
    CACHE.clear()
    first = render(text)
    hits = CACHE.hits
    began = time.perf_counter()
    assert render(text) == first
    assert CACHE.hits == hits + 1 and time.perf_counter() - began < 0.05
    assert text in CACHE and render_tail(text) and CACHE.hits == hits + 1  # the growing tail never uses it


def test_a_reopened_answer_of_many_blocks_is_served_from_the_cache_block_by_block() -> None:
    text = "\n\n".join(f"Paragraph {n} with **bold** and `code` " * 40 for n in range(60))  # ~110 KB
    first = render_blocks(text)
    hits = CACHE.hits
    assert render_blocks(text) == first and CACHE.hits == hits + len(first)


def test_the_cache_drops_the_least_recently_used_past_its_byte_limit() -> None:
    from ui.markdown.cache import RenderCache

    cache = RenderCache(limit=10_000)
    for n in range(40):
        cache.put(f"text {n}", f"text {n}" * 50)
    assert cache.size <= 10_000 and "text 39" in cache and "text 0" not in cache


def test_a_block_or_tail_whose_render_raises_past_the_guard_still_shows_as_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.support.markdown_parts import rebuilt
    from ui.markdown import tail as tail_render
    from ui.markdown import wire as markdown_wire

    def boom(*args: object) -> str:
        raise ValueError("a bug further down")

    for module, name in ((markdown_wire, "render"), (markdown_wire, "last_block"), (tail_render, "render_tail")):
        monkeypatch.setattr(module, name, boom)
    source = "**x** <b>y</b>"
    for last in (False, True):
        assert rebuilt(source, markdown_wire.block_parts(source, last)) == safe_markdown.as_text(source, FAILED)
    message = tail_render.Tail().update(0, len(source), source)
    assert message is not None and rebuilt(source, message[3]) == safe_markdown.as_text(source, FAILED)
