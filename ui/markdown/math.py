"""Math in model output as MathML, converted on the server (``latex2mathml``); nothing is loaded to show it.

Guarantees:
- ``protect(text)`` finds math outside code (fenced blocks and backtick spans are left alone): display
  ``$$…$$`` and ``\\[…\\]``, inline ``\\(…\\)`` and ``$…$`` where the opening ``$`` is followed and the closing one
  preceded by a non-space and the closing one is not followed by a digit (pandoc's rule: ``$5 and $10`` stays
  text), an escaped ``\\$`` never opens. It returns the text with each span replaced by a placeholder that
  markdown never touches (a random word per call: model output cannot forge one) and a ``Math`` that puts
  MathML in their place in markdown's output (``Math.restore``); inside a tag (a link's target) the original
  source goes back instead.
- LaTeX the converter rejects, whose MathML holds any element but MathML's (the converter passes ``<`` in
  ``\\text{}`` through), or a span over ``MATH_LIMIT`` characters, shows as its source text, unchanged.
- The MathML is cleaned with the rest of the answer (``MATH_TAGS``/``MATH_ATTRIBUTES`` are what the sanitizer
  allows in addition): MathML Core presentation elements, no links, no styles, no foreign HTML inside.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field
from functools import lru_cache
from html import escape

import latex2mathml.converter

MATH_LIMIT = 2_000
MATH_TAGS = frozenset(
    ("math", "semantics", "annotation", "merror", "mfrac", "mi", "mmultiscripts", "mn", "mo", "mover", "mpadded")
    + ("mphantom", "mprescripts", "mroot", "mrow", "ms", "mspace", "msqrt", "mstyle", "msub", "msubsup", "msup")
    + ("mtable", "mtd", "mtext", "mtr", "munder", "munderover", "none", "menclose", "mfenced")
)
MATH_ATTRIBUTES = frozenset(
    ("display", "mathvariant", "stretchy", "fence", "separator", "lspace", "rspace", "accent", "accentunder")
    + ("columnalign", "rowalign", "columnspan", "rowspan", "linethickness", "minsize", "maxsize", "largeop")
    + ("movablelimits", "symmetric", "width", "height", "depth", "voffset", "scriptlevel", "displaystyle", "form")
    + ("open", "close", "separators", "notation", "columnlines", "rowlines", "frame", "encoding", "alttext")
)
_FENCE_LINE = re.compile(r"^[ \t]{0,3}(```|~~~)", re.MULTILINE)
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`).+?(?<!`)\1(?!`)", re.DOTALL)
_MATH = re.compile(
    r"\$\$(?P<d1>[^$]+?)\$\$"
    r"|(?<!\\)\\\[(?P<d2>(?:(?!\\\[).)+?)\\\]"  # never across another opener: linear on ``\\[`` repeated
    r"|(?<!\\)\\\((?P<i1>(?:(?!\\\().)+?)\\\)"
    r"|(?<![\\$\w])\$(?=[^\s$])(?P<i2>[^$\n]*?[^\s\\$])\$(?![\d$])",
    re.DOTALL,
)
_TAG = re.compile(r"(<[^>]*>)")
_NAME = re.compile(r"</?([A-Za-z][^\s/>]*)")


@dataclass(slots=True)
class Math:
    """The spans ``protect`` replaced: placeholder word -> (LaTeX source as written, MathML or None)."""

    word: str = ""
    spans: dict[str, tuple[str, str | None]] = field(default_factory=dict)

    def restore(self, html: str) -> str:
        """``html`` (markdown's output) with every placeholder replaced: MathML in text, the source in tags."""
        if not self.spans:
            return html
        key = re.compile(rf"{self.word}\d+z")
        pieces = _TAG.split(html)
        for n, piece in enumerate(pieces):
            if self.word in piece:
                pieces[n] = key.sub(self._in_tag if piece.startswith("<") else self._in_text, piece)
        return "".join(pieces)

    def _in_text(self, match: re.Match[str]) -> str:
        source, mathml = self.spans.get(match.group(0), (match.group(0), None))
        return mathml if mathml is not None else escape(source, quote=False)

    def _in_tag(self, match: re.Match[str]) -> str:
        return escape(self.spans.get(match.group(0), (match.group(0), None))[0], quote=True)


def protect(text: str) -> tuple[str, Math]:
    """``text`` with its math replaced by placeholders, and what puts MathML back (see the module's guarantees)."""
    if "$" not in text and "\\" not in text:
        return text, Math()
    math = Math(word=f"lcmath{secrets.token_hex(6)}n")
    out: list[str] = []
    for piece, is_code in _segments(text):
        out.append(piece if is_code else _MATH.sub(lambda m: _replace(m, math), piece))
    return "".join(out), math


def _replace(match: re.Match[str], math: Math) -> str:
    display = match.group("d1") or match.group("d2")
    latex = display if display is not None else (match.group("i1") or match.group("i2") or "")
    key = f"{math.word}{len(math.spans)}z"
    math.spans[key] = (match.group(0), to_mathml(latex, display is not None))
    return key


@lru_cache(maxsize=1024)
def to_mathml(latex: str, display: bool) -> str | None:
    """MathML for ``latex`` (None when the converter rejects it or it is too long to be worth trying)."""
    if not latex.strip() or len(latex) > MATH_LIMIT:
        return None
    try:
        mathml: str = latex2mathml.converter.convert(latex.strip(), display="block" if display else "inline")
    except Exception:  # any rejection of untrusted LaTeX (its errors are many types): show the source instead
        return None
    if any(name.lower() not in MATH_TAGS for name in _NAME.findall(mathml)):
        return None  # markup the converter let through from the LaTeX (``\text{<img ...>}``): shown as source
    return mathml


def _segments(text: str) -> list[tuple[str, bool]]:
    """``text`` cut into (piece, is code): fenced blocks (to their closing fence or the end) and backtick spans."""
    out: list[tuple[str, bool]] = []
    at = 0
    fences = list(_FENCE_LINE.finditer(text))
    for n in range(0, len(fences), 2):
        start = fences[n].start()
        end = text.find("\n", fences[n + 1].start()) if n + 1 < len(fences) else len(text)
        end = len(text) if end < 0 else end
        out.extend(_spans(text[at:start]))
        out.append((text[start:end], True))
        at = end
    out.extend(_spans(text[at:]))
    return out


def _spans(prose: str) -> list[tuple[str, bool]]:
    out: list[tuple[str, bool]] = []
    at = 0
    for m in _CODE_SPAN.finditer(prose):
        out.append((prose[at : m.start()], False))
        out.append((m.group(0), True))
        at = m.end()
    out.append((prose[at:], False))
    return out
