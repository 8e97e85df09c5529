"""Text that grows by appending, kept as pieces: an append costs the piece, not the text so far.

Guarantees:
- ``Pieces`` is immutable from the outside: ``plus(s)`` returns a new value and never changes what an existing
  value reads. Values of one lineage share one append-only buffer; a value that is not the buffer's newest (an old
  state appended to again, e.g. replay from an old state) copies its own prefix into a new buffer first, so it
  still never sees text appended to the other branch.
- ``str(p)`` (and ``text``) joins the pieces when read, at most once per new piece per buffer (a cached join,
  extended by the new pieces): reading after every append stays linear in practice as long as reads are rarer than
  appends; ``tail(start)`` gives the text from ``start`` in time proportional to what it returns.
- Equality, hashing and ``repr`` are those of the text, so states holding pieces compare as before.
- One lineage is appended from one thread at a time (the reducer of one state), as the reducer guarantees.
"""

from __future__ import annotations

from bisect import bisect_right


class _Buffer:
    __slots__ = ("ends", "joined", "parts")

    def __init__(self, parts: list[str], ends: list[int]) -> None:
        self.parts = parts  # append-only
        self.ends = ends  # ends[i] == total length of parts[: i + 1]
        self.joined = ""  # "".join(parts[:k]) for the k at which it was last extended (len(joined) == ends[k-1])


class Pieces:
    """An immutable text kept as the first ``count`` pieces of a shared append-only buffer."""

    __slots__ = ("_buffer", "_count", "length")

    def __init__(self, buffer: _Buffer | None = None, count: int = 0, length: int = 0) -> None:
        self._buffer = buffer
        self._count = count
        self.length = length

    @classmethod
    def of(cls, text: str) -> Pieces:
        return EMPTY.plus(text) if text else EMPTY

    def plus(self, piece: str) -> Pieces:
        """This text followed by ``piece``."""
        if not piece:
            return self
        buffer = self._buffer
        if buffer is None or len(buffer.parts) != self._count:  # new, or a later value already appended: fork
            parts = buffer.parts[: self._count] if buffer is not None else []
            ends = buffer.ends[: self._count] if buffer is not None else []
            buffer = _Buffer(parts, ends)
            if self._buffer is not None and len(self._buffer.joined) <= self.length:
                buffer.joined = self._buffer.joined
        buffer.parts.append(piece)
        length = self.length + len(piece)
        buffer.ends.append(length)
        return Pieces(buffer, self._count + 1, length)

    @property
    def text(self) -> str:
        buffer = self._buffer
        if buffer is None or self.length == 0:
            return ""
        joined = buffer.joined
        if len(joined) < self.length:
            done = bisect_right(buffer.ends, len(joined))  # pieces already in ``joined``
            joined = buffer.joined = joined + "".join(buffer.parts[done : len(buffer.parts)])
        return joined if len(joined) == self.length else joined[: self.length]

    def tail(self, start: int) -> str:
        """The text from character ``start`` on, without joining what comes before it."""
        buffer = self._buffer
        if buffer is None or start >= self.length:
            return ""
        if len(buffer.joined) >= self.length:
            return buffer.joined[start : self.length]
        first = bisect_right(buffer.ends, start)  # the piece that holds character ``start``
        begin = buffer.ends[first - 1] if first else 0
        return "".join(buffer.parts[first : self._count])[start - begin :]

    def __str__(self) -> str:
        return self.text

    def __len__(self) -> int:
        return self.length

    def __bool__(self) -> bool:
        return self.length > 0

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Pieces):
            return self.length == other.length and (self._buffer is other._buffer or self.text == other.text)
        if isinstance(other, str):
            return self.text == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return repr(self.text)


EMPTY = Pieces()
