"""``AttemptRun``: what one running attempt has delivered so far, and the gates every delta and tool result pass.

Guarantees:
- A run is made by the attempt's owner (``engine.turns.worker.AttemptWorker``) for exactly one attempt and never
  inferred from storage. It writes to the ledger only through the narrow ``append`` callable it was given and
  reads its conversation only through ``view``: it never sees the engine, the store or another conversation.
  Every event it makes carries its ``ids`` (``engine.stamps.AttemptIds``).
- ``receive`` is the chunk gate: a delta is recorded as a rendered ``chunk`` when ``ledger.stale.stale_reason``
  allows it, otherwise as a ``stale_chunk`` with the reason; either way it gets the next per-attempt chunk_seq (what
  reaches the ledger is the worker's to decide: ``AttemptWorker._append``).
- ``outcome`` is set by the owner when the stream ends on its own, ``cancel`` by the owner's one cancel entry
  (a timeout sets both: the cancel and the failure it ends with); whichever is set first decides how the attempt
  is finalized (``settled``). ``time_out`` is how the stream's watchdog asks the owner for that cancel. A ``lost``
  run (its owner claim is gone: ``AttemptWorker.lose``) is settled too, by another instance.
- Delivered text is kept as pieces and joined when read: receiving is linear in the answer's length; runs of
  ``FOLD`` pieces are joined as they come, so the list stays short (a full garbage collection walks each item).
- Tool calls are assembled from their streamed pieces by index; a call's first piece is recorded at once
  (``tool_call_started``: the page shows the call being written), the whole call only when its step has finished
  streaming (``tool_call``), so a Stop mid-step never leaves a half-written call to run. A piece that arrives when
  the attempt may not render is recorded as a stale chunk (block ``tool_call``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from engine.provider import Failure, ProviderConfig, StreamStalled, ToolPiece
from engine.stamps import AttemptIds, attempt_ids
from engine.text import valid_text
from engine.tools import Answer, PendingQuestion
from ledger.events import (
    AnyEvent,
    Block,
    CancelSource,
    Chunk,
    Purpose,
    StaleBlock,
    StaleChunk,
    StaleToolResult,
    StaleWhy,
    StepStarted,
    TextRef,
    ToolCalled,
    ToolCallStarted,
    ToolPart,
    ToolResult,
    ToolStatus,
    Usage,
)
from ledger.pieces import FOLD
from ledger.stale import stale_reason, tool_result_stale_reason
from ledger.state import ConversationState

Append = Callable[[AnyEvent], AnyEvent]
View = Callable[[], ConversationState | None]
#: The watchdog's alarm: the stall it saw, and whether its request is still the one streaming (else: too late).
TimeOut = Callable[[StreamStalled, Callable[[], bool]], None]


@dataclass(frozen=True, slots=True)
class Completed:
    finish_reason: str | None
    usage: Usage | None


@dataclass(frozen=True, slots=True)
class Broken:
    failure: Failure
    request_id: str | None


Outcome = Completed | Broken


@dataclass(frozen=True, slots=True)
class PendingCall:
    """A complete tool call of the step that just finished, as recorded in ``tool_call``."""

    call_id: str
    name: str
    arguments: str


@dataclass(slots=True)
class _Writing:
    call_id: str
    name: str
    provider_id: str | None = None
    pieces: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class CancelOrder:
    source: CancelSource
    keep_partial: bool
    t0: float = field(default_factory=time.monotonic)


@dataclass(kw_only=True, slots=True)
class AttemptRun:
    conversation_id: str
    turn: int
    message_id: str
    user_message_id: str
    attempt_id: str
    model: str
    messages: list[dict[str, Any]]
    context_ids: tuple[str, ...]
    provider: ProviderConfig
    purpose: Purpose = "answer"  # "compaction": no tools are offered (``ledger.compaction``)
    append: Append = field(repr=False)
    view: View = field(repr=False)
    time_out: TimeOut = field(repr=False)
    request_id: str | None = None
    next_chunk_seq: int = 0
    chunk_count: int = 0
    delivered_chars: int = 0
    sent_at: str | None = None
    sent_mono: float | None = None
    first_chunk_mono: float | None = None
    last_chunk_mono: float | None = None
    close_t0: float | None = None
    outcome: Outcome | None = None
    cancel: CancelOrder | None = None
    lost: bool = False  # another instance owns this attempt's end now: nothing more is written or asked
    step: int = 0
    step_chunks: int = 0
    step_inputs: list[list[dict[str, Any]]] = field(default_factory=list)
    step_usage: list[Usage | None] = field(default_factory=list)
    step_reported: Usage | None = None  # what the provider reported of the step now streaming (or None)
    step_starts: list[int] = field(default_factory=list)  # where each step's text begins in the output
    tool_seconds: float = 0.0
    questions: dict[str, PendingQuestion] = field(default_factory=dict)  # a tool's questions waiting (by id)
    approvals: dict[str, asyncio.Future[Answer]] = field(default_factory=dict)
    _pieces: list[str] = field(default_factory=list)
    _writing: dict[int, _Writing] = field(default_factory=dict)
    _keys: dict[int, int] = field(default_factory=dict)  # the provider's index -> the call being written
    ids: AttemptIds = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.ids = attempt_ids(self.conversation_id, self.attempt_id)

    def begin_step(self, number: int) -> None:
        """Record ``step_started``; the step's requests send ``messages`` as they are now."""
        self.step, self.step_chunks, self._writing, self._keys = number, 0, {}, {}
        self.step_inputs.append(self.messages)
        self.step_starts.append(self.delivered_chars)
        self.step_reported = None
        self.append(StepStarted(**self.ids, step=number))

    def receive_piece(self, piece: ToolPiece) -> bool:
        """A piece of a tool call being written. Returns whether it was taken (not stale)."""
        conv = self.view()
        if conv is None:
            return False
        why = stale_reason(conv, self.attempt_id)
        if why is not None:
            self._stale(self.next_chunk_seq, why, len(piece.arguments), "tool_call")
            self.next_chunk_seq += 1
            return False
        self.step_chunks += 1
        self.first_chunk_mono = self.first_chunk_mono or time.monotonic()
        key = self._keys.get(piece.index, piece.index)
        writing = self._writing.get(key)
        if writing is not None and piece.call_id and piece.call_id != writing.provider_id:
            # some providers send every parallel call at index 0: a new id is a new call
            key = self._keys[piece.index] = max(self._writing) + 1
            writing = None
        if writing is None:
            call_id = self._unique_id(conv, piece.call_id or f"call_{self.attempt_id[-12:]}_{self.step}_{key}")
            writing = _Writing(call_id=call_id, name=piece.name or "unnamed_tool", provider_id=piece.call_id)
            self._writing[key] = writing
            self.append(ToolCallStarted(**self.ids, step=self.step, call_id=call_id, name=writing.name, index=key))
        elif piece.name and writing.name == "unnamed_tool":
            writing.name = piece.name
        writing.pieces.append(piece.arguments)
        return True

    def _unique_id(self, conv: ConversationState, wanted: str) -> str:
        """The provider's id, unless this conversation used it already (some providers reuse ids every step):
        then a new one, used in both the call and its tool message, so the history stays paired."""
        taken = {w.call_id for w in self._writing.values()}
        taken.update(c for a in conv.attempts.values() for c in a.tool_calls)
        if wanted not in taken:
            return wanted
        return f"{wanted[:40]}_{self.attempt_id[-8:]}_{self.step}_{len(taken)}"

    def complete_calls(self, server_of: Callable[[str], str | None]) -> list[PendingCall]:
        """Record ``tool_call`` for every call the finished step wrote, in index order, and return them."""
        calls = []
        for index in sorted(self._writing):
            writing = self._writing[index]
            call = PendingCall(
                call_id=writing.call_id, name=writing.name, arguments=valid_text("".join(writing.pieces))
            )
            self.append(
                ToolCalled(
                    **self.ids,
                    step=self.step,
                    call_id=call.call_id,
                    name=call.name,
                    arguments=call.arguments,
                    server=server_of(call.name),
                )
            )
            calls.append(call)
        self._writing, self._keys = {}, {}
        return calls

    def receive(self, text: str, block: Block) -> bool:
        """The chunk gate: record a rendered chunk, or a stale one. Returns whether it was rendered."""
        conv = self.view()
        if conv is None:  # deleted: the store refuses every write, and nothing is shown
            return False
        seq = self.next_chunk_seq
        self.next_chunk_seq += 1
        why = stale_reason(conv, self.attempt_id, seq)
        if why is not None:
            self._stale(seq, why, len(text), block)
            return False
        text = valid_text(text)
        self.append(Chunk(**self.ids, request_id=self.request_id or "", chunk_seq=seq, text=text, block=block))
        now = time.monotonic()
        self.first_chunk_mono = self.first_chunk_mono or now
        self.last_chunk_mono = now
        self.chunk_count += 1
        self.step_chunks += 1
        if block == "text":
            self.delivered_chars += len(text)
            self._pieces.append(text)
            if len(self._pieces) >= 2 * FOLD:  # a list of every piece would be walked by each full collection
                self._pieces[-FOLD:] = ["".join(self._pieces[-FOLD:])]
        return True

    def record_result(
        self, call_id: str, status: ToolStatus, content: str, duration_ms: float | None,
        parts: tuple[ToolPart, ...] = (), structured: str | None = None, whole: TextRef | None = None,
    ) -> bool:  # fmt: skip
        """The tool-result gate: record the call's one result (whole: its parts and structured content too; over the
        bound, ``content`` is the preview of ``whole``), or a stale one. Returns whether it counted."""
        conv = self.view()
        if conv is None:
            return False
        content = valid_text(content)
        why = tool_result_stale_reason(conv, self.attempt_id, call_id)
        if why is not None:
            self.append(StaleToolResult(**self.ids, call_id=call_id, why=why, size=len(content)))
            return False
        self.append(
            ToolResult(
                **self.ids,
                call_id=call_id,
                status=status,
                content=content,
                size=whole.chars if whole is not None else len(content),
                duration_ms=duration_ms,
                parts=tuple(replace(p, text=valid_text(p.text)) if p.text is not None else p for p in parts),
                structured=valid_text(structured) if structured is not None else None,
                whole=whole,
            )
        )
        return True

    def _stale(self, seq: int, why: StaleWhy, chars: int, block: StaleBlock) -> None:
        request = self.request_id or ""
        self.append(StaleChunk(**self.ids, request_id=request, chunk_seq=seq, why=why, chars=chars, block=block))

    @property
    def settled(self) -> bool:
        """The attempt's end is decided (by the stream or by a cancel): nobody else may decide it."""
        return self.outcome is not None or self.cancel is not None or self.lost

    @property
    def output_text(self) -> str:
        """The text delivered so far (joined once per read, not per chunk)."""
        if len(self._pieces) > 1:
            self._pieces[:] = ["".join(self._pieces)]
        return self._pieces[0] if self._pieces else ""

    def order_cancel(self, source: CancelSource, keep_partial: bool, failure: Failure | None = None) -> CancelOrder:
        """The cancel is decided (only the owner's cancel entry calls this); with ``failure`` (a timeout) the
        attempt ends failed with it once the stream is closed."""
        self.cancel = CancelOrder(source=source, keep_partial=keep_partial)
        self.close_t0 = self.cancel.t0
        if failure is not None:
            self.outcome = Broken(failure, self.request_id)
        return self.cancel
