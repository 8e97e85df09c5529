"""What the engine holds in memory about the one attempt that is streaming in a conversation.

Guarantees: an ``Active`` is created for exactly one attempt, owned by its conversation's ``Runtime`` and never
inferred from storage; ``outcome`` is set by the stream task when the stream ends on its own, ``cancel`` by the
one cancel path; whichever is set first decides how the attempt is finalized.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from engine.failures import Failure
from ledger.events import CancelSource, Usage


@dataclass(frozen=True, slots=True)
class Completed:
    finish_reason: str | None
    usage: Usage | None


@dataclass(frozen=True, slots=True)
class Broken:
    failure: Failure
    request_id: str | None


Outcome = Completed | Broken


@dataclass(slots=True)
class CancelOrder:
    source: CancelSource
    keep_partial: bool
    t0: float = field(default_factory=time.monotonic)


@dataclass(slots=True)
class Active:
    conversation_id: str
    turn: int
    message_id: str
    user_message_id: str
    attempt_id: str
    model: str
    messages: list[dict[str, str]]
    task: asyncio.Task[None] | None = None
    request_id: str | None = None
    next_chunk_seq: int = 0
    chunk_count: int = 0
    delivered_chars: int = 0
    output_text: str = ""
    sent_at: str | None = None
    sent_mono: float | None = None
    first_chunk_mono: float | None = None
    last_chunk_mono: float | None = None
    context_ids: tuple[str, ...] = ()
    close_t0: float | None = None
    outcome: Outcome | None = None
    cancel: CancelOrder | None = None

    @property
    def settled(self) -> bool:
        """The attempt's end is decided (by the stream or by a cancel): nobody else may decide it."""
        return self.outcome is not None or self.cancel is not None


@dataclass(slots=True)
class Runtime:
    """Per-conversation: the lock that serializes cancel/finalize, the turn counter, the active attempt."""

    conversation_id: str
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    active: Active | None = None
    viewers: set[str] = field(default_factory=set)
