"""The waterfall of each attempt and the replay of what the user saw: each attempt's timeline
(``ledger.folds.timeline``, with its arrivals) timed in milliseconds, its bars the trace's spans
(``ledger.folds.trace``).

Guarantees:
- Pure and typed; every figure is read or derived from the events (their ``ts``, in milliseconds after the
  attempt's ``started``): each request as a bar (sent → first chunk → last chunk → its end), each tool call and
  each wait for a person as a bar, the cancel → ``upstream_closed`` interval, chunk arrivals per time bin
  (rendered and stale), and the gaps between arrivals longer than a third of the idle timeout.
- Bounded whatever the answer's length: at most ``MAX_BINS`` bins, ``MAX_FRAMES`` replay frames (the moment of the
  Stop and the last chunk always among them), ``MAX_ROWS`` rows, ``MAX_GAPS`` gaps (the longest), ``MAX_MARKS``
  stale marks; only ``text`` (the rendered answer, as the user saw it) grows with the answer.
- The replay: ``frames`` say how many chunks (tokens) and characters of ``text`` were on the screen at each moment;
  ``tokens_at_stop`` counts the chunks rendered before the ``cancel_requested``, ``tokens_kept`` is the
  ``cancelled`` event's ``chunk_count``: by the stale rule they are equal (the timeline's: ``ledger.stale``).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Literal

from ledger.events import AnyEvent, Cancelled, UpstreamClosed
from ledger.folds.timeline import AttemptTimeline, timelines
from ledger.folds.trace import traces
from ledger.folds.trace_values import SpanValue, ts_ns

MAX_BINS, MAX_FRAMES, MAX_ROWS, MAX_GAPS, MAX_MARKS = 120, 600, 60, 40, 200
RowKind = Literal["request", "tool", "wait"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Row:
    kind: RowKind
    label: str  # the ledger's own words: the span's name ("chat model", "execute_tool name", ...)
    start_ms: float
    end_ms: float
    first_ms: float | None = None  # requests: the first chunk
    last_ms: float | None = None  # requests: the last chunk
    outcome: str = ""  # "ok", or the error type ("cancelled", "server", ...)


@dataclass(frozen=True, kw_only=True, slots=True)
class Frame:
    at_ms: float
    tokens: int  # chunks rendered so far
    chars: int  # characters of ``text`` on the screen


@dataclass(frozen=True, kw_only=True, slots=True)
class Waterfall:
    attempt_id: str
    message_id: str
    duration_ms: float
    rows: tuple[Row, ...]
    hidden_rows: int
    bin_ms: float
    rendered_bins: tuple[int, ...]
    stale_bins: tuple[int, ...]
    gaps: tuple[tuple[float, float], ...]
    stale_marks: tuple[float, ...]
    cancel_ms: float | None
    closed_ms: float | None
    cancel_source: str | None
    frames: tuple[Frame, ...]
    text: str
    tokens_at_stop: int | None
    tokens_kept: int | None
    status: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Arrivals:
    """An attempt's timeline in milliseconds after its ``started``: the chunks, the Stop, the close."""

    timeline: AttemptTimeline
    t0: int
    times: tuple[float, ...]  # rendered chunks
    chars: tuple[int, ...]  # characters of text on the screen after each
    stale: tuple[float, ...]  # stale chunks (the stale rule's, ``ledger.stale``)
    cancel_ms: float | None
    closed_ms: float | None  # the last upstream close after the Stop
    source: str | None  # the cancel's source (the ``cancelled`` event's, when it came)
    kept: int | None  # the ``cancelled`` event's chunk count


def waterfalls(events: Iterable[AnyEvent], idle_timeout: float) -> list[Waterfall]:
    """One ``Waterfall`` per ended attempt of a conversation's events (seq order), in the order they started."""
    events = list(events)
    found, by_id = [], {t.started.attempt_id: t for t in timelines(events, arrivals=True)}
    for value in traces(events):
        if (t := by_id.get(value.attempt_id)) is not None:
            found.append(_waterfall(arrivals(t), value.spans, idle_timeout))
    return found


def arrivals(t: AttemptTimeline) -> Arrivals:
    """The timeline's moments and arrivals, timed after its ``started``."""
    t0 = ts_ns(t.started.ts) or 0
    chars = list(accumulate(len(c.text) if c.block == "text" else 0 for c in t.rendered))
    cancel, stopped, closed, cancelled = t.cancel, False, None, None
    for moment in (m for m in t.moments if not m.late):
        stopped = stopped or moment.event is cancel
        if isinstance(moment.event, UpstreamClosed) and stopped:
            closed = moment.event
        elif isinstance(moment.event, Cancelled):
            cancelled = moment.event
    return Arrivals(
        timeline=t,
        t0=t0,
        times=tuple(_ms(t0, c.ts) for c in t.rendered),
        chars=tuple(chars),
        stale=tuple(_ms(t0, ts) for ts in t.stale_at),
        cancel_ms=None if cancel is None else _ms(t0, cancel.ts),
        closed_ms=None if closed is None else _ms(t0, closed.ts),
        source=cancelled.source if cancelled else cancel.source if cancel else None,
        kept=cancelled.chunk_count if cancelled else None,
    )


def _waterfall(a: Arrivals, spans: tuple[SpanValue, ...], idle_timeout: float) -> Waterfall:
    root = spans[0]
    duration = max(1.0, (root.end_ns - a.t0) / 1e6, *(a.times[-1:] or [0.0]), *(a.stale[-1:] or [0.0]))
    rows = [_row(span, a.t0) for span in spans[1:]]
    bin_ms, rendered, stale = _bins(a.times, a.stale, duration)
    return Waterfall(
        attempt_id=a.timeline.started.attempt_id,
        message_id=a.timeline.started.message_id,
        duration_ms=duration,
        rows=tuple(rows[:MAX_ROWS]),
        hidden_rows=max(0, len(rows) - MAX_ROWS),
        bin_ms=bin_ms,
        rendered_bins=rendered,
        stale_bins=stale,
        gaps=_gaps(sorted(a.times + a.stale), idle_timeout * 1000 / 3, spans, a.t0),
        stale_marks=tuple(a.stale[:: max(1, -(-len(a.stale) // MAX_MARKS))]),
        cancel_ms=a.cancel_ms,
        closed_ms=a.closed_ms,
        cancel_source=a.source,
        frames=_frames(a),
        text="".join(c.text for c in a.timeline.rendered if c.block == "text"),
        tokens_at_stop=a.timeline.chunks_at_cancel,
        tokens_kept=a.kept,
        status=str(root.attribute("ledger.status") or ""),
    )


def _row(span: SpanValue, t0: int) -> Row:
    kind: RowKind = "request" if span.kind == "client" else "wait" if span.name.startswith("await_") else "tool"
    first = next((e.at_ns for e in span.events if e.name == "ledger.first_chunk"), None)
    outcome = str(span.attribute("error.type") or "ok")
    chunks = span.attribute("ledger.chunks") or 0
    last = None
    if kind == "request" and first is not None:
        last = span.end_ns if chunks else first
    return Row(
        kind=kind,
        label=span.name,
        start_ms=(span.start_ns - t0) / 1e6,
        end_ms=(span.end_ns - t0) / 1e6,
        first_ms=None if first is None else (first - t0) / 1e6,
        last_ms=None if last is None else (last - t0) / 1e6,
        outcome=outcome,
    )


def _bins(
    times: Sequence[float], stale: Sequence[float], duration: float
) -> tuple[float, tuple[int, ...], tuple[int, ...]]:
    count = max(1, min(MAX_BINS, (len(times) + len(stale) + 4) // 5))  # about five arrivals a bin
    width = duration / count
    rendered, late = [0] * count, [0] * count
    for source, target in ((times, rendered), (stale, late)):
        for t in source:
            target[min(count - 1, int(t / width))] += 1
    return width, tuple(rendered), tuple(late)


def _gaps(
    times: list[float], longer_than: float, spans: tuple[SpanValue, ...], t0: int
) -> tuple[tuple[float, float], ...]:
    """Silences between arrivals (and from each request's send to its first arrival) over ``longer_than`` ms."""
    found = [(a, b) for a, b in zip(times, times[1:], strict=False) if b - a > longer_than]
    for span in spans[1:]:
        first = next((e.at_ns for e in span.events if e.name == "ledger.first_chunk"), None)
        if span.kind == "client" and first is not None and (first - span.start_ns) / 1e6 > longer_than:
            found.append(((span.start_ns - t0) / 1e6, (first - t0) / 1e6))
    longest = sorted(found, key=lambda gap: gap[0] - gap[1])[:MAX_GAPS]
    return tuple(sorted(longest))


def _frames(a: Arrivals) -> tuple[Frame, ...]:
    n = len(a.times)
    if n == 0:
        return (Frame(at_ms=0.0, tokens=0, chars=0),)
    step = max(1, -(-n // MAX_FRAMES))
    picks = set(range(step - 1, n, step)) | {0, n - 1}
    if a.timeline.chunks_at_cancel:
        picks.add(a.timeline.chunks_at_cancel - 1)
    frames = [Frame(at_ms=0.0, tokens=0, chars=0)]
    frames += [Frame(at_ms=a.times[i], tokens=i + 1, chars=a.chars[i]) for i in sorted(picks)]
    return tuple(frames)


def frame_at(waterfall: Waterfall, at_ms: float) -> Frame:
    """What was on the screen at ``at_ms`` (the last frame at or before it)."""
    times = [f.at_ms for f in waterfall.frames]
    return waterfall.frames[max(0, bisect.bisect_right(times, at_ms) - 1)]


def _ms(t0: int, ts: str) -> float:
    at = ts_ns(ts)
    return 0.0 if at is None else max(0.0, (at - t0) / 1e6)
