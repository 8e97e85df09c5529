"""Half-written markdown shown as if it were closed: a growing tail never shows raw markers while it streams.

Guarantees: ``closed(text)`` (for the tail while it grows; ``ui.markdown.tail`` keeps it only where the markers it
added really rendered) only appends (the text the model wrote is never changed, so what is copied or sent
is exactly what was written); it closes an open code fence, then, outside code, an open inline code span, bold
(``**``/``__``), strike (``~~``) and a link whose ``](`` target is still being written. Text already balanced
comes back unchanged. ``closed_fence`` closes only a code fence: what a completed answer gets.
``closed_if_shown`` renders closed only where the markers added really render (the growing tail, and the end of
an answer cut short by a Stop or an error, which so looks as it did while it streamed).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from html import unescape

_FENCE = re.compile(r"^\s{0,3}(```+|~~~+)", re.MULTILINE)
_LINK_TARGET = re.compile(r"\[[^\[\]\n]*\]\([^()\s]*$")
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_TAG = re.compile(r"<[^>]*>")
_ORDERED = re.compile(r"^[ \t]*\d{1,9}[.)](?=[ \t])", re.MULTILINE)  # an ordered list item's number
_LINK_TARGETS = re.compile(r"\]\([^()\s]*\)?")  # a link's target, closed or still being written
MARKERS = frozenset("*_`~#>-+[]()!$")


def closed_fence(text: str) -> str:
    """``text`` with an open code fence closed (CommonMark: an unclosed fence runs to the end); nothing else."""
    fences = _FENCE.findall(text)
    if len(fences) % 2:
        fence: str = fences[-1]
        return text + ("\n" if not text.endswith("\n") else "") + fence
    return text


def closed(text: str) -> str:
    if (fenced := closed_fence(text)) != text:
        return fenced
    last = text.rsplit("\n", 1)[-1]
    if _FENCE.match(last):
        return text
    out = text
    if _CODE_SPAN.sub("", last).count("`") % 2:
        out, last = out + "`", last + "`"
    prose = _CODE_SPAN.sub("", last)
    suffix = ")" if _LINK_TARGET.search(last) else ""
    if re.search(r"[^\s*_~`\[\]()]", prose):  # words, not markers alone (a rule, a fence being typed)
        suffix += "".join(marker for marker in ("~~", "__", "**") if prose.count(marker) % 2)
    return out + suffix


def closed_if_shown(text: str, render: Callable[[str], str], inline: bool = True) -> str:
    """``render`` of ``text`` closed where that adds no visible character, else of ``text`` as written.

    Closing is kept only if the render with it shows ``text`` with markers taken out and nothing else
    (``only_markers_taken``): ``self.__x is name-mangled.`` closed would show ``.__``, so it is not closed.
    ``inline=False``: only an open code fence is closed (a completed answer)."""
    trimmed = text.rstrip()  # trailing spaces would keep a closing ``**`` from closing
    shut = closed(trimmed) if inline else closed_fence(trimmed)
    if shut == trimmed:
        return render(text)
    html = render(shut)
    return html if only_markers_taken(trimmed, unescape(_TAG.sub("", html))) else render(text)


def only_markers_taken(source: str, shown: str) -> bool:
    """Whether ``shown`` is ``source`` with only markdown markers (and link targets) taken out, whitespace aside
    (matched greedily: a False may be wrong, never a True)."""
    s = "".join(_ORDERED.sub("", _LINK_TARGETS.sub("]", source)).split())
    r = "".join(shown.split())
    j = 0
    for c in s:
        if j < len(r) and c == r[j]:
            j += 1
        elif c not in MARKERS:
            return False
    return j == len(r)
