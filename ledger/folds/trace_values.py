"""The values of the trace projection: spans and measurements as the ledger records them, free of any telemetry SDK.

Guarantees:
- Every value is a frozen slotted dataclass; attribute values are str, int, float, bool or a tuple of str.
- Ids are deterministic: the trace id of an attempt and the span id of each of its parts are hashes of the ledger's
  own ids (``trace_id``, ``span_id``), so a live run and a back-fill of its export give the same ids, and never 0.
- Times are nanoseconds since the Unix epoch, read from the events' ``ts`` (``ts_ns``); an unreadable ``ts`` is
  ``None`` and the projection falls back on the attempt's other times.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

AttrValue = str | int | float | bool | tuple[str, ...]
Attrs = tuple[tuple[str, AttrValue], ...]
SpanKind = Literal["internal", "client"]
SpanStatus = Literal["unset", "ok", "error"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)


def ts_ns(ts: str | None) -> int | None:
    """An event's ``ts`` (ISO 8601, UTC unless it says otherwise) in nanoseconds since the epoch."""
    if not ts:
        return None
    try:
        at = datetime.fromisoformat(ts)
    except ValueError:
        return None
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    return ((at - _EPOCH) // _MICRO) * 1000


def _hash(text: str, size: int) -> int:
    value = int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=size).digest(), "big")
    return value or 1


def trace_id(attempt_id: str) -> int:
    """The 128-bit trace id of an attempt (one trace per attempt: its ``invoke_agent`` span is the root)."""
    return _hash(f"ledger-chat/trace/{attempt_id}", 16)


def span_id(role: str, *ids: str) -> int:
    """The 64-bit span id of one part of an attempt: ``agent`` (the attempt), ``chat`` (a request id), ``tool``
    (a call id), ``wait`` (a call id waiting for approval)."""
    return _hash("/".join(("ledger-chat/span", role, *ids)), 8)


@dataclass(frozen=True, kw_only=True, slots=True)
class SpanEvent:
    """A moment inside a span (the Stop, the first chunk), with its own attributes."""

    name: str
    at_ns: int
    attributes: Attrs = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class SpanValue:
    """One span: ids, parent, name, kind, times from the ledger, attributes, status."""

    trace_id: int
    span_id: int
    parent_id: int | None
    name: str
    kind: SpanKind
    start_ns: int
    end_ns: int
    attributes: Attrs
    status: SpanStatus = "unset"
    status_message: str | None = None
    events: tuple[SpanEvent, ...] = ()

    def attribute(self, name: str) -> AttrValue | None:
        return next((value for key, value in self.attributes if key == name), None)


@dataclass(frozen=True, kw_only=True, slots=True)
class Measurement:
    """One value for a histogram of the conventions (or the ledger's own), with its attributes."""

    metric: str
    value: float
    attributes: Attrs


@dataclass(frozen=True, kw_only=True, slots=True)
class AttemptTraceValue:
    """What one attempt projects to: its spans (root first) and the measurements made of them."""

    conversation_id: str
    attempt_id: str
    spans: tuple[SpanValue, ...]
    measurements: tuple[Measurement, ...]
    final: bool = True  # False: spans made ready before the attempt ended (``ledger.folds.trace.Traces.add``)
