"""Markdown for untrusted model output, and the block splitter that lets finished paragraphs freeze.

Guarantees:
- ``render`` escapes every raw HTML tag (it shows as text, markdown2 ``safe_mode='escape'``), then passes
  markdown2's output through a maintained sanitizer (``nh3``, Rust's ammonia) that keeps only the tags and
  attributes markdown makes (``ALLOWED``), links only to http, https and mailto (``rel="noopener noreferrer"``,
  a new tab), and no event handler, style other than table alignment, or class other than code highlighting.
  markdown2's own known bypasses (``javascript&#58;`` hrefs and the like) therefore never reach the page.
- An image in model output never loads: ``![alt](url)`` becomes a link to the url (the page's CSP also allows
  images from the app itself only), so a prompt-injected answer cannot leak data through an image request.
- ``MarkdownBlock`` shows it in a ``ui.html`` element with NiceGUI's client-side DOMPurify pass as a second
  layer: an update carries the rendered HTML and ~90 bytes of framing (``ui.markdown`` adds ~200 more per update,
  which dominates a streamed answer's traffic).
- ``split_blocks(text)`` cuts text at blank lines outside fenced code blocks; joining the blocks with blank
  lines gives back the same rendering, and every block but the last is finished (it can never change again
  while text is only appended).
"""

from __future__ import annotations

import re
from functools import lru_cache

import markdown2
import nh3
from nicegui import ui
from pygments.formatters import HtmlFormatter
from pygments.token import STANDARD_TYPES

EXTRAS = ("fenced-code-blocks", "tables", "code-friendly", "target-blank-links", "strike")
ALLOWED = frozenset(
    ("p", "br", "hr", "em", "strong", "b", "i", "del", "s", "code", "pre", "span", "div", "blockquote")
    + ("ul", "ol", "li", "a", "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td")
)
_CLEANER = nh3.Cleaner(
    tags=set(ALLOWED),
    attributes={"a": {"href", "title"}, "th": {"style"}, "td": {"style"}},
    allowed_classes={"span": set(STANDARD_TYPES.values()) - {""}, "div": {"codehilite"}},
    url_schemes={"http", "https", "mailto"},
    filter_style_properties={"text-align"},
    link_rel="noopener noreferrer",
    set_tag_attribute_values={"a": {"target": "_blank"}},
    url_relative="deny",  # a link in an answer never points into this app
    strip_comments=True,
)
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_IMG = re.compile(r"<img\b([^>]*?)/?>", re.IGNORECASE)
_ATTR = re.compile(r'([a-z]+)="([^"]*)"')


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
    """Untrusted markdown as safe HTML: markdown2 (raw HTML escaped), images as links, then nh3."""
    html: str = markdown2.markdown(content, extras=list(EXTRAS), safe_mode="escape")
    return sanitize(_IMG.sub(_image_as_link, html))


def sanitize(html: str) -> str:
    """Only what markdown makes survives: ``ALLOWED`` tags, safe links, highlighting classes, table alignment."""
    cleaned: str = _CLEANER.clean(html)
    return cleaned


def _image_as_link(match: re.Match[str]) -> str:
    """markdown2's ``<img>`` (its attribute values are escaped) as a link that loads nothing."""
    attrs = dict(_ATTR.findall(match.group(1)))
    src = attrs.get("src", "")
    return f'<a href="{src}" title="image, not loaded">{attrs.get("alt") or src or "image"}</a>'


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
