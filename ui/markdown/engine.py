"""The markdown parser behind ``ui.markdown.safe``: markdown-it-py (CommonMark), bounded in depth and in time.

Guarantees:
- CommonMark with GFM tables and strikethrough, code fenced with backticks and closed (as markdown2 had: ``~~~``
  and a fence never closed are text, ``_closed_fence``), raw HTML never passed through (``html=False``: a tag shows
  as text), no typographer (the text shown is the text written). markdown-it is built against pathological input:
  its cost grows linearly with the text for every family known to explode in other parsers
  (``bench/render_bench.py``).
- Nesting is bounded: a block nested ``NESTING`` levels deep (quotes count one level, a list two: the list and its
  item) shows the rest of its lines as escaped text in a paragraph (``lc_text``), never dropped and never deeper,
  so no input recurses beyond a fixed depth. Inline nesting (brackets in brackets) stops at ``INLINE_NESTING``: the
  rest is text (markdown-it's own bound; ``[`` repeated costs in proportion to it: 7 ms/KB at 20, 19 at 40).
- ``parse(text, deadline)`` raises ``Overtime`` once ``time.monotonic()`` passes ``deadline`` (checked between
  inline blocks and before each highlighted code block): a caller shows the text as written instead.
- A fenced block with a known language up to ``HIGHLIGHT_LIMIT`` characters is highlighted by Pygments
  (``<div class="codehilite">``), any other code is a plain ``<pre><code>``.
- A bare http(s) URL in text (never in code or a link) becomes a link (``BARE_URL``); ``- [x]`` at the start of a
  list item is a disabled checkbox (``tasks``).
- Every ``[text](target)`` is a link whatever its scheme (``_any_link``): ``ui.markdown.safe``'s sanitizer keeps
  only http, https and mailto targets (an ``<a>`` without ``href`` otherwise).
- Inline markup (emphasis, strike) nested deeper than ``NESTING`` shows its markers as text (``_flat_inline``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from html import escape

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_block.fence import make_fence_rule
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

NESTING = 32  # block levels: 32 quotes, or 16 lists inside one another
MAX_NESTING = NESTING + 8  # markdown-it's own bound for blocks (it drops what is deeper): never reached
INLINE_NESTING = 20  # its bound for inline parsing (its preset's default): a ``[`` costs in proportion to it
HIGHLIGHT_LIMIT = 8_000
# a bare http(s) URL becomes a link (parentheses only in balanced pairs; trailing punctuation stays text)
_URL_CHAR = r"""[^\s<>"'`\[\]()*~]"""  # ``~`` alone (``/~user``), never ``~~`` (strike)
BARE_URL = re.compile(
    rf"""(?<![\w/="'(])https?://(?:{_URL_CHAR}|~(?!~)|\({_URL_CHAR}*\))*(?:[^\s<>"'`\[\]()*~.,;:!?_]|\({_URL_CHAR}*\))"""
)
_TASK = re.compile(r"(<li>\s*(?:<p>)?)\[([ xX])\](?=\s)")
_FORMATTER = HtmlFormatter(cssclass="codehilite", wrapcode=True)


class Overtime(Exception):
    """Rendering took longer than its deadline."""


def parse(text: str, deadline: float) -> str:
    """``text`` as HTML (before sanitizing): see the module's guarantees."""
    return tasks(_MD.render(text, {"deadline": deadline}))


def tasks(html: str) -> str:
    """``[ ]``/``[x]`` at a list item's start as a disabled checkbox named "not done"/"done"."""
    return _TASK.sub(_task_box, html) if "<li>" in html else html


def _task_box(match: re.Match[str]) -> str:
    done = match.group(2) != " "
    label = "done" if done else "not done"
    return f'{match.group(1)}<input type="checkbox" {"checked " if done else ""}disabled aria-label="{label}">'


def _too_deep(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """At ``NESTING`` levels: the rest of the lines as one paragraph of text."""
    if state.level < NESTING:
        return False
    if not silent:
        token = state.push("lc_text", "p", 0)
        token.content = state.getLines(start, end, state.blkIndent, False)
        token.map = [start, end]
        state.line = end
    return True


_BACKTICK_FENCE = make_fence_rule(markers=("`",))


def _closed_fence(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """A code fence of backticks that is closed, as markdown2 had it: ``~~~`` and a fence never closed are text
    (a fence's info string is never shown, so an unclosed ``\x60\x60\x60alpha`` would make ``alpha`` vanish;
    ``ui.markdown.closing`` closes a fence the stream is still writing where that renders)."""
    count = len(state.tokens)
    if not _BACKTICK_FENCE(state, start, end, False):
        return False
    last = state.line - 1
    closing = state.src[state.bMarks[last] + state.tShift[last] : state.eMarks[last]].rstrip()
    closed = last > start and closing.startswith(state.tokens[-1].markup) and not closing.strip("`")
    if silent or not closed:
        del state.tokens[count:]
        state.line = start
    return closed


def _text_block(renderer: object, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    return f"<p>{escape(tokens[idx].content.strip(), quote=False)}</p>\n"


def _inline_in_time(state: StateCore) -> None:
    """markdown-it's ``inline`` core rule, checking the deadline between blocks."""
    deadline = state.env.get("deadline", float("inf"))
    for token in state.tokens:
        if token.type == "inline":
            if time.monotonic() > deadline:
                raise Overtime
            token.children = []
            _INLINE.inline.parse(token.content, _INLINE, state.env, token.children)


def _bare_urls(state: StateCore) -> None:
    """Text (outside links) holding a bare URL split into text, a link and text."""
    for block in state.tokens:
        if block.type != "inline" or not block.children or "http" not in block.content:
            continue
        out: list[Token] = []
        depth = 0
        for token in block.children:
            depth += token.type == "link_open"
            depth -= token.type == "link_close"
            if token.type != "text" or depth or "http" not in token.content:
                out.append(token)
                continue
            at = 0
            for match in BARE_URL.finditer(token.content):
                if match.start() > at:
                    out.append(_text(token.content[at : match.start()], token.level))
                link = Token("link_open", "a", 1, attrs={"href": match.group(0)}, level=token.level)
                out += [link, _text(match.group(0), token.level + 1), Token("link_close", "a", -1, level=token.level)]
                at = match.end()
            if at < len(token.content):
                out.append(_text(token.content[at:], token.level))
        block.children = out


def _flat_inline(state: StateCore) -> None:
    """Inline markup (emphasis, strike) nested deeper than ``NESTING`` shows its markers as text."""
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        deep: list[bool] = []
        for n, token in enumerate(block.children):
            if token.nesting == 1:
                deep.append(len(deep) >= NESTING)
            if token.nesting and deep[-1]:
                block.children[n] = _text(token.markup, token.level)
            if token.nesting == -1:
                deep.pop()


def _text(content: str, level: int) -> Token:
    return Token("text", "", 0, content=content, level=level)


def _highlight(code: str, lang: str, attrs: str) -> str:
    """Pygments for a known language (``<div class="codehilite">``), else "" (a plain ``<pre><code>``)."""
    if not lang or len(code) > HIGHLIGHT_LIMIT:
        return ""
    try:
        lexer = get_lexer_by_name(lang)
    except ClassNotFound:
        return ""
    html: str = highlight(code, lexer, _FORMATTER)
    return html


def _fence(renderer: object, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    token = tokens[idx]
    lang = token.info.strip().split(maxsplit=1)[0] if token.info.strip() else ""
    if time.monotonic() > env.get("deadline", float("inf")):
        raise Overtime
    highlighted = _highlight(token.content, lang, "")
    return highlighted or f"<pre><code>{escape(token.content, quote=False)}</code></pre>\n"


def _base(max_nesting: int) -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "maxNesting": max_nesting, "typographer": False})
    md.validateLink = _any_link  # type: ignore[method-assign]
    return md.enable(["table", "strikethrough"])


def _any_link(url: str) -> bool:
    """Every link target parses as a link (as markdown2 had it): the sanitizer then drops a target that is not
    http, https or mailto, so ``[x](javascript:…)`` shows ``x``, never its target as text."""
    return True


def _engine() -> MarkdownIt:
    md = _base(MAX_NESTING)
    md.block.ruler.before("table", "lc_depth", _too_deep, {"alt": []})
    fence_alt = ["paragraph", "reference", "blockquote", "list"]
    md.block.ruler.at("fence", _closed_fence, {"alt": fence_alt})
    md.core.ruler.at("inline", _inline_in_time)
    md.core.ruler.after("text_join", "lc_bare_urls", _bare_urls)
    md.core.ruler.after("lc_bare_urls", "lc_flat_inline", _flat_inline)
    md.add_render_rule("lc_text", _text_block)
    md.add_render_rule("fence", _fence)
    return md


_MD = _engine()
_INLINE = _base(INLINE_NESTING)  # the same inline rules, parsed with their own (lower) nesting bound
