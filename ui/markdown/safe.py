"""Markdown for untrusted model output, and the block splitter that lets finished paragraphs freeze.

Guarantees:
- ``render`` never raises and never takes long: it parses with markdown-it (``ui.markdown.engine``: CommonMark,
  raw HTML shown as text, nesting bounded, cost linear in the text), then passes the HTML through a maintained
  sanitizer (``nh3``, Rust's ammonia) that keeps only the tags and attributes markdown makes (``ALLOWED``), links
  only to http, https and mailto (``rel="noopener noreferrer"``, a new tab), and no event handler, style other than
  table alignment, or class other than code highlighting. If the parser fails or passes ``DEADLINE`` seconds, the
  text shows as written (escaped, ``as_text``) under a small note saying why: one message, never the page. A
  render cut short while the machine was busy (less than half the deadline of its own CPU time) is not cached.
- Beyond markdown: math (``ui.markdown.math``: MathML made here, its elements only), task lists (``- [x]`` as
  disabled checkboxes named "done"/"not done"), bare http(s) URLs as links, a numbered list that starts past 1
  keeps its first number (``<ol start>``: a list split by a code block goes on counting). No underscore emphasis
  (``__init__`` stays as written; each ``_`` reaches the parser as a random word). Every ``<`` but an autolink's
  reaches the parser as a random word too and comes back as ``&lt;``: the parser never sees raw HTML.
- An image in model output never loads: ``![alt](url)`` becomes a link to the url (the page's CSP also allows
  images from the app itself only), so a prompt-injected answer cannot leak data through an image request.
- ``render`` keeps what it made by the text's hash, whatever its size (``ui.markdown.cache``: bounded in bytes,
  least recently used dropped): a chat opened again is not rendered again. ``render_fresh`` (the growing tail,
  whose text is never seen twice) skips the cache.
- ``MarkdownBlock`` shows it in a ``ui.html`` element with NiceGUI's client-side DOMPurify pass as a second
  layer: an update carries the rendered HTML and ~90 bytes of framing (``ui.markdown`` adds ~200 more per update,
  which dominates a streamed answer's traffic).
- ``BlockSplitter`` cuts text at blank lines outside fenced code blocks, incrementally: fed a text that only
  grows, it scans only what was added since its last block, and a block it returns is finished (it can never
  change again while text is only appended). ``split_blocks(text)`` is the same cut in one go (finished blocks,
  then the tail), and ``render_blocks`` the full render of a text the stream element must end equal to.
- A code block over ``HIGHLIGHT_LIMIT`` characters is not highlighted (highlighting costs several times the bytes
  and ~7 ms per KB); names, whitespace and punctuation get no span of their own.
- ``html_parts(source, html)`` writes rendered HTML as markup plus ``[start, end]`` ranges of ``source`` wherever
  a text node is the source's own text, so a client that holds the source rebuilds the HTML from little more
  than its markup (ranges count UTF-16 units, as JavaScript does, astral characters included).
"""

from __future__ import annotations

import re
import secrets
import time
from bisect import bisect_left
from dataclasses import dataclass, field
from functools import cache
from html import escape, unescape

import nh3
from nicegui import ui
from pygments.formatters import HtmlFormatter
from pygments.token import STANDARD_TYPES

from ui.markdown.cache import RenderCache
from ui.markdown.closing import closed_if_shown
from ui.markdown.engine import HIGHLIGHT_LIMIT, Overtime, parse
from ui.markdown.math import MATH_ATTRIBUTES, MATH_TAGS, protect

ALLOWED = frozenset(
    ("p", "br", "hr", "em", "strong", "b", "i", "del", "s", "code", "pre", "span", "div", "blockquote", "input")
    + ("ul", "ol", "li", "a", "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td")
    + ("small",)  # the note over a text shown as written (the parser never makes one: raw HTML is text)
)
_CLEANER = nh3.Cleaner(
    tags=set(ALLOWED | MATH_TAGS),
    attributes={
        "a": {"href", "title"},
        "th": {"style"},
        "td": {"style"},
        "input": {"checked", "aria-label"},
        "ol": {"start"},
    }
    | {tag: set(MATH_ATTRIBUTES) for tag in MATH_TAGS},
    allowed_classes={"span": set(STANDARD_TYPES.values()) - {""}, "div": {"codehilite"}},
    url_schemes={"http", "https", "mailto"},
    filter_style_properties={"text-align"},
    link_rel="noopener noreferrer",
    set_tag_attribute_values={"a": {"target": "_blank"}, "input": {"type": "checkbox", "disabled": ""}},
    url_relative="deny",  # a link in an answer never points into this app
    strip_comments=True,
)
_FENCE = re.compile(r"[ \t]{0,3}(```|~~~)")
_FENCE_INFO = re.compile(r"^([ \t]{0,3}(?:```|~~~))[^\n`]*$", re.MULTILINE)
_TAG = re.compile(r"(<[^>]*>)")
# highlighted names, whitespace and punctuation look like plain text in both code styles: no span (half the bytes)
_PLAIN_SPAN = re.compile(r'<span class="[nwp]">([^<]*)</span>')
DEADLINE = 2.0  # seconds one render may take before its text is shown as written
CACHE_BYTES = 64 << 20
CACHE = RenderCache(CACHE_BYTES)
MIN_RANGE = 8  # a shorter text node of whitespace only stays in the markup (it would be found anywhere); a
# shorter one with text is a range all the same: the markup around it then repeats (a table's cells), and repeats
# are sent as numbers (``ui.markdown.tail.packed``)
_RAW_LT = re.compile(r"<(?!(?:https?://|mailto:)[^\s<>]*>)")  # every ``<`` but an autolink's
_STRAY_LT = re.compile(r"<(?![a-zA-Z/!][^<>]*>)")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_IMG = re.compile(r"<img\b([^>]*?)/?>", re.IGNORECASE)
_ATTR = re.compile(r'([a-z]+)="([^"]*)"')
FAILED = "Shown as written: this message could not be rendered as markdown."
OVERTIME = "Shown as written: rendering this message as markdown took too long."


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


@cache
def code_css() -> str:
    """Pygments styles for highlighted code, light and dark (added once per page; made once per process)."""
    light: str = HtmlFormatter(nobackground=True).get_style_defs(".codehilite")
    dark: str = HtmlFormatter(nobackground=True, style="github-dark").get_style_defs(".body--dark .codehilite")
    return light + dark


def render(content: str) -> str:
    """Untrusted markdown as safe HTML, kept by the text's hash (see the module's guarantees); never raises."""
    if (found := CACHE.get(content)) is not None:
        return found
    html, lasting = _render_safely(content)
    if lasting:  # not a render cut short by its deadline: on a less busy moment it may well finish
        CACHE.put(content, html)
    return html


def render_fresh(content: str) -> str:
    """``render`` without the cache (a growing tail), never raising: on failure the text as written, with a note."""
    return _render_safely(content)[0]


def _render_safely(content: str) -> tuple[str, bool]:
    """The HTML and whether it would be the same on another try (False: cut short by the deadline while this
    thread's own CPU time was under half of it, so the machine was busy: the next try may well finish)."""
    cpu = time.thread_time()
    try:
        return _render(content, time.monotonic() + DEADLINE), True
    except Overtime:
        return as_text(content, OVERTIME), time.thread_time() - cpu > DEADLINE / 2
    except Exception:  # any failure of the parser on untrusted text (RecursionError included): this message only
        return as_text(content, FAILED), True


def as_text(content: str, note: str) -> str:
    """``content`` exactly as written, escaped, line by line, under a small ``note``."""
    lines = "<br>\n".join(escape(line, quote=False) for line in content.strip("\n").split("\n"))
    return f"<p><small>{escape(note, quote=False)}</small></p>\n<p>{lines}</p>\n"


def _render(content: str, deadline: float) -> str:
    if len(content) > HIGHLIGHT_LIMIT:
        content = _FENCE_INFO.sub(r"\1", content)  # no language: a plain <pre><code>, not 9x the bytes in spans
    protected, math = protect(content)
    underscore = f"lcu{secrets.token_hex(4)}u" if "_" in protected else ""
    if underscore:
        protected = protected.replace("_", underscore)
    lt = f"lcl{secrets.token_hex(4)}l" if "<" in protected else ""
    if lt:  # the parser never sees raw HTML (it would show it as text anyway: a second line of defence)
        protected = _RAW_LT.sub(lt, protected)
    html = parse(protected, deadline)
    if underscore:
        html = html.replace(underscore, "_")
    if lt:
        html = html.replace(lt, "&lt;")
    html = _STRAY_LT.sub("&lt;", html)
    html = _IMG.sub(_image_as_link, math.restore(html))
    return _PLAIN_SPAN.sub(r"\1", sanitize(html))


def render_blocks(text: str, cut: bool = False) -> list[str]:
    """The full render of ``text`` as a finished stream shows it: each block on its own, exactly as written (an
    unclosed code fence runs to the end, as CommonMark says: the last block gets its closing fence); ``cut`` (an
    answer stopped or failed mid-way): the last block closed where that adds no visible character."""
    blocks = split_blocks(text)
    last = len(blocks) - 1
    return [render(block) if n < last else last_block(block, cut) for n, block in enumerate(blocks) if block.strip()]


def last_block(source: str, cut: bool) -> str:
    """The final block of a finished answer (see ``render_blocks``)."""
    return closed_if_shown(source, render, inline=cut)


Part = str | list[int]


def html_parts(source: str, html: str) -> list[Part]:
    """``html`` as markup strings and ``[start, end]`` ranges of ``source`` (escaped, they give ``html`` back)."""
    astral = [] if source.isascii() else [m.start() for m in _ASTRAL.finditer(source)]
    parts: list[Part] = []
    literal: list[str] = []
    cursor = 0
    for piece in _TAG.split(html):
        if not piece or piece[0] == "<" or len(piece) < MIN_RANGE and piece.isspace():
            literal.append(piece)
            continue
        text = unescape(piece)
        at = source.find(text, cursor, cursor + len(text) + 512)  # text nodes come in order, markers between
        newlines = ""
        if at < 0 and text.endswith("\n"):  # a code block's last line, its newline added by markdown
            text, newlines = text.rstrip("\n"), "\n" * (len(text) - len(text.rstrip("\n")))
            at = source.find(text, cursor, cursor + len(text) + 512) if len(text) >= MIN_RANGE else -1
        if at < 0:
            literal.append(piece)
            continue
        if literal:
            parts.append("".join(literal))
            literal = []
        end = at + len(text)  # in UTF-16 units, as JavaScript counts: an astral character is two
        parts.append([at + bisect_left(astral, at), end + bisect_left(astral, end)] if astral else [at, end])
        cursor = end
        if newlines:
            literal.append(newlines)
    if literal:
        parts.append("".join(literal))
    return parts


def sanitize(html: str) -> str:
    """Only what markdown makes survives: ``ALLOWED`` tags, safe links, highlighting classes, table alignment."""
    cleaned: str = _CLEANER.clean(html)
    return cleaned


def _image_as_link(match: re.Match[str]) -> str:
    """The parser's ``<img>`` (its attribute values are escaped) as a link that loads nothing."""
    attrs = dict(_ATTR.findall(match.group(1)))
    src = attrs.get("src", "")
    return f'<a href="{src}" title="image, not loaded">{attrs.get("alt") or src or "image"}</a>'


def split_blocks(text: str) -> list[str]:
    """Blocks separated by blank lines, never splitting a fenced code block; the last (the tail) may still grow."""
    splitter = BlockSplitter()
    blocks = [text[start:end] for start, end in splitter.feed(text)]
    return [*blocks, text[splitter.start :]]


@dataclass(slots=True)
class BlockSplitter:
    """Finished blocks of a growing text, found by scanning only what was added (lines after the last block).

    A blank line outside a fence ends a block once the next non-blank line is seen to start a new one (its first
    character is not a space or tab: an indented line continues a list item)."""

    start: int = 0  # where the current (unfinished) block starts
    pos: int = 0  # where the next line to scan starts
    content_end: int | None = None  # end of the current block's last non-blank line
    in_fence: bool = False
    pending: bool = False  # blank line(s) after content, outside a fence: the block may have ended
    found: list[tuple[int, int]] = field(default_factory=list)

    def feed(self, text: str) -> list[tuple[int, int]]:
        """``(start, end)`` of the blocks ``text`` finished since the last call (``text`` only ever grows)."""
        self.found = []
        pos = self.pos
        while (nl := text.find("\n", pos)) >= 0:
            self._line(text, pos, nl)
            pos = nl + 1
        self.pos = pos
        if self.pending and pos < len(text):  # the line being written decides as soon as it shows its start
            first = text[pos]
            if first not in " \t":
                self._cut(pos)
            elif text[pos:].strip():
                self.pending = False
        return self.found

    def _line(self, text: str, start: int, end: int) -> None:
        blank = not text[start:end].strip()
        if self.pending and not blank:
            if text[start] in " \t":
                self.pending = False
            else:
                self._cut(start)
        if blank:
            if not self.in_fence and self.content_end is not None:
                self.pending = True
            return
        if _FENCE.match(text, start, end):
            self.in_fence = not self.in_fence
        self.content_end = end

    def _cut(self, next_start: int) -> None:
        assert self.content_end is not None
        self.found.append((self.start, self.content_end))
        self.start, self.content_end, self.pending = next_start, None, False
