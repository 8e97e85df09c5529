"""One conversation's events as a store keeps them in memory: chunks as plain tuples the garbage collector skips.

Why: a long answer is tens of thousands of ``chunk`` events. Kept as event objects (frozen slotted dataclasses,
which CPython always tracks), each one is walked by every full garbage collection for as long as the conversation
stays loaded, so a single full collection, which runs on whichever thread allocates (the event loop's, mostly),
grew with the answer's length (issue 11: 30 ms at 20,000 chunks, more beyond). A tuple of atomic values (str, int)
is untracked by the collector after its first young collection: the collector never walks it again.

Guarantees:
- ``events()`` gives back exactly what was appended (equal events, in the same order); ``last_seq`` is the seq of
  the last one (0 when empty) and costs nothing.
- A chunk event whose fields are exact ``str``/``int`` values costs one tuple of them, untracked by the collector
  once a young collection saw it; the event objects are made again (equal, not identical) when read. Every other
  event (a conversation has few) is kept as the object appended. Items are sealed in tuples of ``BLOCK``: a block
  of rows is untracked too, so a collection walks one list entry per block, not one per event.
- Not thread-safe by itself: the store appends under its lock and reads a ``copy`` taken under it.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain

from ledger.events import AnyEvent, Chunk

#: seq, ts, attempt_id, request_id, chunk_seq, text, block: a chunk without its conversation id (the log's own).
ChunkRow = tuple[int, str, str, str, int, str, str]
_ATOMIC = frozenset((str, int))
BLOCK = 256  # items per sealed block: the lists the collector walks hold one entry per block, not per event


def log_of(logs: dict[str, EventLog], conversation_id: str) -> EventLog:
    """The conversation's log in a store's ``logs`` (under the store's lock), an empty one made the first time."""
    kept = logs.get(conversation_id)
    if kept is None:
        kept = logs[conversation_id] = EventLog(conversation_id)
    return kept


class EventLog:
    """The events of one conversation, in seq order, appended one at a time."""

    __slots__ = ("conversation_id", "_blocks", "_tail", "last_seq")

    def __init__(self, conversation_id: str, events: Iterable[AnyEvent] = ()) -> None:
        self.conversation_id = conversation_id
        self._blocks: list[tuple[AnyEvent | ChunkRow, ...]] = []  # full blocks of ``BLOCK`` items
        self._tail: list[AnyEvent | ChunkRow] = []  # the items after them
        self.last_seq = 0
        for event in events:
            self.append(event)

    def events(self) -> tuple[AnyEvent, ...]:
        """Every event, the chunks made again from their rows."""
        cid = self.conversation_id
        items = chain(chain.from_iterable(self._blocks), self._tail)
        return tuple(_chunk(cid, item) if isinstance(item, tuple) else item for item in items)

    def copy(self) -> EventLog:
        """A copy that later appends do not change (cheap: taken under the store's lock, read outside it)."""
        copy = EventLog(self.conversation_id)
        copy._blocks, copy._tail, copy.last_seq = list(self._blocks), list(self._tail), self.last_seq
        return copy

    def append(self, event: AnyEvent) -> None:
        row = _row(event) if isinstance(event, Chunk) and event.conversation_id == self.conversation_id else None
        self._tail.append(event if row is None else row)
        self.last_seq = event.seq
        if len(self._tail) >= BLOCK:  # a tuple of untracked rows is untracked too: the collector skips the block
            self._blocks.append(tuple(self._tail))
            self._tail.clear()

    def __len__(self) -> int:
        return len(self._blocks) * BLOCK + len(self._tail)


def _row(chunk: Chunk) -> ChunkRow | None:
    """The chunk as a row of atomic values, or None when a field is not an exact str/int (kept as the object)."""
    row = (chunk.seq, chunk.ts, chunk.attempt_id, chunk.request_id, chunk.chunk_seq, chunk.text, chunk.block)
    return row if {type(value) for value in row} <= _ATOMIC else None


def _chunk(conversation_id: str, row: ChunkRow) -> Chunk:
    seq, ts, attempt_id, request_id, chunk_seq, text, block = row
    return Chunk(
        seq=seq,
        ts=ts,
        conversation_id=conversation_id,
        attempt_id=attempt_id,
        request_id=request_id,
        chunk_seq=chunk_seq,
        text=text,
        block=block,  # type: ignore[arg-type]  # a Block when it was appended
    )
