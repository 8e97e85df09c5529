"""Text that grows by appending, kept as pieces: an append costs the piece, not the text so far.

Guarantees:
- ``Pieces`` is immutable from the outside: ``plus(s)`` returns a new value and never changes what an existing
  value reads. Values of one lineage share one append-only buffer; a value that is not the buffer's newest (an old
  state appended to again, e.g. replay from an old state) copies its own prefix into a new buffer first, so it
  still never sees text appended to the other branch.
- ``str(p)`` (and ``text``) joins the buffer's text with fewer than ``FOLD`` pending pieces when read (the pending
  ones are folded into the text every ``FOLD`` appends); reading never changes the buffer, so a worker thread may
  read a value while the loop appends to its lineage; ``tail(start)`` gives the text from ``start`` in time
  proportional to what it returns (and fewer than ``FOLD`` pieces).
- Equality, hashing and ``repr`` are those of the text, so states holding pieces compare as before.
- A buffer holds its text as one ``str`` and fewer than ``FOLD`` pieces not joined yet, never a list of every piece:
  a full garbage collection walks the same few references at any answer length (issue 11).
- One lineage is appended from one thread at a time (the reducer of one state), as the reducer guarantees.
"""

from __future__ import annotations

FOLD = 256  # pending pieces joined into the buffer's text at once, at the latest (keeps ``pending`` short)


class _Buffer:
    __slots__ = ("count", "state")

    def __init__(self, joined: str = "", joined_count: int = 0) -> None:
        # (the text of the lineage's first ``joined_count`` pieces, joined_count, the pieces after those): replaced
        # whole when pieces are folded, so a reader on another thread (search, export) always sees one consistent
        # triple; the list is only ever appended to
        self.state: tuple[str, int, list[str]] = (joined, joined_count, [])
        self.count = joined_count  # joined_count + len(pending)


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
        if buffer is None or buffer.count != self._count:  # new, or a later value already appended: fork
            buffer = _Buffer(self.text, self._count)
        count = buffer.count = self._count + 1
        joined, _, pending = buffer.state
        pending.append(piece)
        if len(pending) >= FOLD:
            buffer.state = (joined + "".join(pending), count, [])
        return Pieces(buffer, count, self.length + len(piece))

    @property
    def text(self) -> str:
        buffer = self._buffer
        if buffer is None or self.length == 0:
            return ""
        joined, joined_count, pending = buffer.state
        if len(joined) >= self.length:
            return joined if len(joined) == self.length else joined[: self.length]
        return joined + "".join(pending[: self._count - joined_count])

    def tail(self, start: int) -> str:
        """The text from character ``start`` on, without joining what comes before it."""
        buffer = self._buffer
        if buffer is None or start >= self.length:
            return ""
        joined, joined_count, pending = buffer.state
        if len(joined) >= self.length:
            return joined[start : self.length]
        rest = "".join(pending[: self._count - joined_count])  # this value's pieces after ``joined``
        return rest[start - len(joined) :] if start >= len(joined) else joined[start:] + rest

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
