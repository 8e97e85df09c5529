"""A search result's line as a person reads it: plain words around the match, the query's words marked.

Guarantees: ``snippet_html(line, words)`` is HTML made only of the line's text, escaped, and ``<mark
class="lc-hit">`` around every case-insensitive occurrence of a query word; markdown's markup (emphasis, code
ticks, links and images as their words, heading, quote and list markers) is dropped so ``**bulkheads**`` reads
``bulkheads``; a line longer than ``WIDTH`` characters is cut to a window that starts a little before the first
match, with "…" where it was cut. Nothing else of the line can become markup.
"""

from __future__ import annotations

import html
import re

WIDTH = 160  # characters of a line shown in a result
BEFORE = 40  # of them, at most this many before the first match

_IMAGE_OR_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_LINE_MARKER = re.compile(r"^\s*(?:#{1,6}\s+|>\s*|[-*+]\s+|\d+[.)]\s+)+")
_EMPHASIS = re.compile(r"(?<!\w)(?:\*{1,3}|_{1,3}|~~)|(?:\*{1,3}|_{1,3}|~~)(?!\w)")


def plain(line: str) -> str:
    """The line's words without markdown's markup (a snake_case name keeps its underscores)."""
    text = _IMAGE_OR_LINK.sub(r"\1", line)
    text = _LINE_MARKER.sub("", text)
    text = text.replace("`", "")
    return " ".join(_EMPHASIS.sub("", text).split())


def snippet_html(line: str, words: list[str]) -> str:
    text = plain(line)
    wanted = [w for w in {w.lower() for w in words} if w]
    pattern = re.compile("|".join(re.escape(w) for w in sorted(wanted, key=len, reverse=True)), re.IGNORECASE)
    first = pattern.search(text) if wanted else None
    matched_at = first.start() if first else 0
    start = max(0, matched_at - BEFORE)
    if start:  # begin at a word (only a match far into the line moves the start)
        space = text.find(" ", start)
        start = space + 1 if 0 <= space < matched_at else start
    window = text[start : start + WIDTH]
    out = ["…" if start else ""]
    at = 0
    for found in pattern.finditer(window) if wanted else ():
        out.append(html.escape(window[at : found.start()]))
        out.append(f'<mark class="lc-hit">{html.escape(found.group())}</mark>')
        at = found.end()
    out.append(html.escape(window[at:]))
    out.append("…" if start + WIDTH < len(text) else "")
    return "".join(out)
