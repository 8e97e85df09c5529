"""The growing tail of a streamed answer rendered as markdown, sent as the part of its markup that changed.

Guarantees:
- ``render_tail(source)`` goes through exactly the sanitizing path of a finished block (``ui.markdown.safe``:
  markdown-it with raw HTML as text, math as MathML, nh3): nothing the tail renders can run or load anything; like
  it, it never raises and its cost is linear in the tail (a failure shows the tail as written, with a note). It
  skips the finished blocks' cache: a growing tail's text is never seen twice.
- Half-written markup is closed while the tail grows (``**bold`` shows bold at once) only where the markers it
  added really render (``ui.markdown.closing.closed_if_shown``): ``self.__x is name-mangled.`` is never shown ``.__``.
- The tail is never highlighted (a fence's language is dropped while it is open): a code block is highlighted once
  it closes, which changes colours only (the block's markup is otherwise the tail's: no layout jump).
- ``Tail.update`` gives the browser's message for a new tail: ``[start, end, keep, parts]``, the text from UTF-16
  offset ``start`` to ``end`` shown as the first ``keep`` parts it already holds followed by ``parts`` (markup
  strings and ranges of the tail's own text, ``ui.markdown.safe.html_parts``), or None when nothing changed; ``keep``
  may be ``[parts, units]`` (``delta``: the next part begins with that much of the held one). A growing paragraph
  costs a range and its closing tags per update, a growing table its new rows: bytes stay bounded by the text (and
  its markup), not its square.
- Rendering costs CPU in proportion to the tail: a tail over ``CHEAP`` characters is rendered only when the time
  since its last render is ``RATIO`` times that render's cost (``due``), so tail rendering takes at most about
  1/``RATIO`` of the loop's time; in between, the browser appends the new text as it is to what it shows.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from ui.markdown.closing import closed_if_shown
from ui.markdown.safe import FAILED, Part, as_text, html_parts, render_fresh

CHEAP = 3_000  # characters: a tail this short is rendered on every update (~1.5 ms at most)
RATIO = 8
PERIOD = 64  # parts: the longest structure a run repeats (a table row of 31 cells)
RUN = 4  # parts: a shorter run is sent part by part
DIGITS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"  # a length < 62 as one character
SHARED = 32  # characters: a shorter shared beginning of a markup part is sent again, not referred to
_FENCE_INFO = re.compile(r"^([ \t]{0,3}(?:```|~~~))[\w+#.-]+[ \t]*$", re.MULTILINE)  # a language name


def render_tail(source: str) -> str:
    """The tail's HTML: closed where closing renders, unhighlighted, through the finished blocks' sanitizer."""
    plain = _FENCE_INFO.sub(r"\1", source) if "```" in source or "~~~" in source else source
    return closed_if_shown(plain, render_fresh)


def _tail_parts(source: str) -> list[Part]:
    """The tail's markup and ranges; never raises (past the renderer's own guard: the tail as written)."""
    try:
        return html_parts(source, render_tail(source))
    except Exception:
        return html_parts(source, as_text(source, FAILED))


def delta(old: list[Part], new: list[Part]) -> tuple[int | list[int], list[Part]]:
    """``new`` as ``(keep, rest)``: its first ``keep`` parts are ``old``'s, ``rest`` follows them. Where the first
    parts that differ are both markup (a table is one markup string), ``keep`` is ``[parts, units]``: the next
    part of ``new`` begins with that many UTF-16 units of ``old``'s (``rest[0]`` is what follows), so a growing
    table or a block that ends as the tail showed it costs what was added, not its whole markup again."""
    keep = 0
    while keep < len(old) and keep < len(new) and old[keep] == new[keep]:
        keep += 1
    if keep < len(old) and keep < len(new) and isinstance(a := old[keep], str) and isinstance(b := new[keep], str):
        same = common(a, b)
        if same >= SHARED:
            units = same if a.isascii() else len(a[:same].encode("utf-16-le")) // 2
            return [keep, units], [b[same:], *new[keep + 1 :]]
    return keep, new[keep:]


def packed(parts: list[Part], n: int = 0, held: list[Part] | None = None) -> list[object]:
    """``parts`` as sent (``static/markdown_stream.js`` ``unpacked``), ``held`` the whole list (its first ``n`` parts
    kept before these; ``held[n]`` may be ``parts[0]`` longer at its start): a range as ``[gap, length]``, the gap
    from the end of the range before it (or 0), or as ``-length`` where its gap is the previous range's; a markup
    string already in the message as its index among its strings; a run of whole periods that repeat the structure
    of the ``period`` parts before them (the same strings, ranges with the same gaps: a table's rows, a list's
    items) as ``[period, lengths]``, each range's length a character of ``DIGITS`` (or all as numbers if one is
    longer): a row costs a character a cell."""
    whole = held if held is not None else parts
    base = max(0, n - PERIOD)  # the structure of the parts a run can repeat, not of the whole list (its CPU)
    keys = [None] * base + structure(whole[base:], ended(whole, base))
    cursor = ended(whole, n)
    seen: dict[str, int] = {}
    out: list[object] = []
    last = -1  # the previous range's gap (none yet)
    at, to = n, n + len(parts)
    recent: dict[object, list[int]] = {}
    for j in range(max(0, n - PERIOD), n):
        recent.setdefault(keys[j], []).append(j)
    while at < to:
        cut = at == n and held is not None and whole[n] != parts[0]  # sent as a string the browser continues
        period, run = (0, 0) if cut else repeated(keys, at, to, recent.get(keys[at], ()))
        if run:
            lengths = [p[1] - p[0] for p in whole[at : at + run] if isinstance(p, list)]
            out.append([period, "".join(DIGITS[k] for k in lengths) if max(lengths) < len(DIGITS) else lengths])
            gaps = [k for k in keys[at : at + run] if isinstance(k, int)]
            cursor, last = next(p[1] for p in reversed(whole[at : at + run]) if isinstance(p, list)), gaps[-1]
        else:
            run, part = 1, parts[at - n]
            if isinstance(part, list):
                gap, length = part[0] - cursor, part[1] - part[0]
                out.append(-length if gap == last and length > 0 else [gap, length])
                cursor, last = part[1], gap
            elif part in seen:
                out.append(seen[part])
            else:
                seen[part] = len(seen)
                out.append(part)
        for j in range(at, at + run):
            recent.setdefault(keys[j], []).append(j)
        at += run
    return out


def ended(parts: list[Part], n: int) -> int:
    """Where the last range of ``parts[:n]`` ends (0: none)."""
    return next((p[1] for p in reversed(parts[:n]) if isinstance(p, list)), 0)


def structure(parts: list[Part], cursor: int = 0) -> list[object]:
    """Each part's structure: a markup string itself, a range its gap from the range before it (or ``cursor``)."""
    keys = list[object]()
    for part in parts:
        if isinstance(part, list):
            keys.append(part[0] - cursor)
            cursor = part[1]
        else:
            keys.append(part)
    return keys


def repeated(keys: list[object], at: int, to: int, before: Sequence[int]) -> tuple[int, int]:
    """``(period, parts)``: the whole periods from ``at`` (before ``to``) that repeat the structure of the
    ``period`` parts before each, for the nearest earlier part of ``at``'s structure (``before``) that gives at
    least ``RUN`` parts with a range; ``(0, 0)`` if none does."""
    for earlier in reversed(before[-4:]):
        period = at - earlier
        if period > PERIOD:
            break
        end = at
        while end < to and keys[end] == keys[end - period]:
            end += 1
        run = (end - at) // period * period
        if run >= RUN and any(isinstance(k, int) for k in keys[at : at + period]):
            return period, run
    return 0, 0


def kept(keep: int | list[int]) -> int:
    """How many whole parts a ``keep`` keeps."""
    return keep[0] if isinstance(keep, list) else keep


def common(a: str, b: str) -> int:
    """The length of the longest common prefix of ``a`` and ``b`` (slices compared at C speed, halving)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[low:mid] == b[low:mid]:
            low = mid
        else:
            high = mid - 1
    return low


@dataclass(slots=True)
class Tail:
    """What the browser shows of the tail (its start and parts), and when it was last rendered."""

    start: int = -1
    end: int = -1
    parts: list[Part] = field(default_factory=list)
    cost: float = 0.0
    at: float = 0.0

    def due(self, length: int) -> bool:
        return length <= CHEAP or self.wait() <= 0

    def wait(self) -> float:
        """Seconds until a long tail is due again."""
        return max(0.0, self.at + RATIO * self.cost - time.monotonic())

    def update(self, start16: int, end16: int, source: str) -> list[object] | None:
        begun = time.monotonic()
        parts = _tail_parts(source) if source.strip() else []
        self.at = time.monotonic()
        self.cost = self.at - begun
        keep: int | list[int] = 0
        rest = parts
        if start16 == self.start:
            keep, rest = delta(self.parts, parts)
            if keep == len(self.parts) == len(parts) and end16 == self.end:
                return None
        self.start, self.end, self.parts = start16, end16, parts
        return [start16, end16, keep, rest]

    def forget(self) -> None:
        """The browser's tail is not known (a render was not sent): the next message carries all its parts."""
        self.start, self.end, self.parts = -1, -1, []

    def whole(self) -> list[object] | None:
        return [self.start, self.end, 0, self.parts] if self.start >= 0 else None
