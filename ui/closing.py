"""Half-written markdown shown as if it were closed: a streaming (or stopped) answer never shows raw markers.

Guarantees: ``closed(text)`` only appends (the text the model wrote is never changed, so what is copied or sent
is exactly what was written); it closes an open code fence, then, outside code, an open inline code span, bold
(``**``/``__``), strike (``~~``) and a link whose ``](`` target is still being written. Text already balanced
comes back unchanged.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^\s{0,3}(```|~~~)", re.MULTILINE)
_LINK_TARGET = re.compile(r"\[[^\[\]\n]*\]\([^()\s]*$")
_CODE_SPAN = re.compile(r"`[^`\n]*`")


def closed(text: str) -> str:
    fences = _FENCE.findall(text)
    if len(fences) % 2:
        fence: str = fences[-1]
        return text + ("\n" if not text.endswith("\n") else "") + fence
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
