"""The kinds of an agent turn: its steps (model calls) and its tool calls, each answered by one result.

Guarantees:
- Immutable values like every event (``ledger.events.values.Event``); they belong to the one list of kinds in
  ``ledger.events.core`` (``AnyEvent``), which re-exports them: ``from ledger.events.core import ToolResult`` works.
- A ``tool_call`` is answered by exactly one ``tool_result``; a result that arrives once its attempt has ended
  or was superseded is recorded as ``stale_tool_result`` and never shown (``ledger.stale``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ledger.events.values import Event, Flags, StaleWhy, TextRef, ToolPart, ToolStatus, Usage


@dataclass(frozen=True, kw_only=True, slots=True)
class StepStarted(Event):
    """A model call of an agent attempt begins (step 1 is the first request of every attempt)."""

    KIND: ClassVar[str] = "step_started"
    FLAGS: ClassVar[Flags] = Flags(attempt=True, urgent=False, prompt=True, listed=False, late_phase=True)
    attempt_id: str
    step: int


@dataclass(frozen=True, kw_only=True, slots=True)
class StepFinished(Event):
    """A step's stream ended on its own: with tool calls to run (``tool_calls``) or with the answer."""

    KIND: ClassVar[str] = "step_finished"
    FLAGS: ClassVar[Flags] = Flags(attempt=True, urgent=False, prompt=False, listed=False, late_phase=True)
    attempt_id: str
    step: int
    finish_reason: str | None = None
    usage: Usage | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallStarted(Event):
    """The model began writing a tool call (its first streamed piece: id and name)."""

    KIND: ClassVar[str] = "tool_call_started"
    FLAGS: ClassVar[Flags] = Flags(attempt=True, urgent=False, prompt=True, listed=False, late_phase=False)
    attempt_id: str
    step: int
    call_id: str
    name: str
    index: int = 0


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCalled(Event):
    """A tool call is complete (its step finished streaming): it will be answered by exactly one ``tool_result``."""

    KIND: ClassVar[str] = "tool_call"
    FLAGS: ClassVar[Flags] = Flags(attempt=True, urgent=True, prompt=True, listed=False, late_phase=True)
    attempt_id: str
    step: int
    call_id: str
    name: str
    arguments: str
    server: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolAwaitingApproval(Event):
    KIND: ClassVar[str] = "tool_awaiting_approval"
    FLAGS: ClassVar[Flags] = Flags(attempt=True, urgent=False, prompt=True, listed=False, late_phase=True)
    attempt_id: str
    call_id: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolDispatched(Event):
    KIND: ClassVar[str] = "tool_dispatched"
    FLAGS: ClassVar[Flags] = Flags(attempt=True, urgent=True, prompt=True, listed=False, late_phase=True)
    attempt_id: str
    call_id: str
    server: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolProgress(Event):
    KIND: ClassVar[str] = "tool_progress"
    FLAGS: ClassVar[Flags] = Flags(attempt=True, urgent=False, prompt=False, listed=False, late_phase=False)
    attempt_id: str
    call_id: str
    progress: float
    total: float | None = None
    message: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolResult(Event):
    """The one result of a tool call: its full content (the model history may get a shortened copy)."""

    KIND: ClassVar[str] = "tool_result"
    FLAGS: ClassVar[Flags] = Flags(attempt=True, urgent=True, prompt=True, listed=False, late_phase=True)
    attempt_id: str
    call_id: str
    status: ToolStatus
    content: str
    size: int = 0
    duration_ms: float | None = None
    parts: tuple[ToolPart, ...] = ()  # every content part, whole (``content`` is their text, as before)
    structured: str | None = None  # the result's ``structuredContent``, as JSON text
    whole: TextRef | None = None  # a text over ``ledger.bounds.TEXT_BOUND``: ``content`` is its preview (and each
    # part's text and ``structured`` at most a preview each), the whole text is this blob


@dataclass(frozen=True, kw_only=True, slots=True)
class StaleToolResult(Event):
    """A tool result that arrived for an attempt that had ended or been superseded: recorded, never shown."""

    KIND: ClassVar[str] = "stale_tool_result"
    FLAGS: ClassVar[Flags] = Flags(attempt=True, urgent=False, prompt=False, listed=False, late_phase=False)
    attempt_id: str
    call_id: str
    why: StaleWhy
    size: int = 0
