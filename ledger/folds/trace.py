"""The trace projection: each attempt's timeline (``ledger.folds.timeline``) as OpenTelemetry GenAI spans, from the
ledger alone (pure, deterministic).

Guarantees:
- One trace per attempt: an ``invoke_agent`` root span (started → its end), a ``chat {model}`` client span per
  request (re-sends are their own spans; sent → done / failed / upstream closed), an ``execute_tool {name}``
  span per tool call (dispatched → result; MCP's ``tools/call``), an ``await_approval {name}`` span per wait for a
  person. Times are the events' ``ts``; ids are hashes of the ledger's ids (``ledger.folds.trace_values``), so the same
  events always give the same spans, live (``Traces.add``, event by event) or back-filled (``traces``).
- Spans are ready as their events land: a ``chat`` span when its request ends inside the attempt (its step
  finished, or it failed and is re-sent), an ``execute_tool`` span (and its wait) when its result
  lands; the root and whatever is still open when the attempt's ``persisted`` lands. A span made early is never
  made again: the attempt's final value reuses it, so live and back-filled spans are the same by construction.
- A cancel is an error status with ``error.type`` ``cancelled``, finish reason ``cancelled`` and the source in
  ``ledger.cancel_source``; a failure is an error with the ledger's ``error_type``; never a success.
- What the spans count and when the attempt ended are its timeline's, by the stale rule (``ledger.stale``) and the
  one-end rule (``ledger.ends``): an event after the attempt's end changes no span; the trace is made when its
  first ``persisted`` lands, and what comes after it is never folded.
- Message content (the question, the answer, tool arguments and results) only when ``content`` is True; a
  request's parameters are never secrets (``request_sent``). Key redaction of content is the exporter's.
"""

from __future__ import annotations

from collections.abc import Iterable

from ledger.events import AnyEvent, Started
from ledger.folds.timeline import AttemptTimeline, Timelines
from ledger.folds.trace_spans import chat_span, model_name, ms_between, provider_name, root_span, tool_spans
from ledger.folds.trace_values import AttemptTraceValue, Attrs, Measurement, SpanValue, span_id, trace_id, ts_ns

__all__ = ["Traces", "attempt_trace", "provider_name", "traces"]


class Traces:
    """Attempts followed as their events land. ``add`` returns the spans an event made ready (``final`` False), or,
    once the attempt's ``persisted`` came, its whole trace (``final`` True: every span, those sent early included,
    and the measurements)."""

    def __init__(self, content: bool = False) -> None:
        self.content = content
        self._timelines = Timelines(content)
        self._early: dict[str, dict[int, SpanValue]] = {}

    def add(self, event: AnyEvent) -> AttemptTraceValue | None:
        if (landed := self._timelines.add(event)) is None:  # a chunk (the hot path), or no attempt followed
            return None
        fold, persisted = landed
        attempt_id = fold.started.attempt_id
        if persisted:
            self._timelines.drop(attempt_id)
            return attempt_trace(fold.freeze(), self._early.pop(attempt_id, None))
        if not fold.ended:
            return None
        ended, early = tuple(fold.ended), self._early.setdefault(attempt_id, {})
        fold.ended.clear()
        spans = early_spans(fold.freeze(), ended, early)
        if not spans:
            return None
        return AttemptTraceValue(
            conversation_id=fold.started.conversation_id,
            attempt_id=attempt_id,
            spans=tuple(spans),
            measurements=(),
            final=False,
        )

    def follows(self, attempt_id: str) -> bool:
        """Whether this attempt's ``started`` was seen (its end alone is back-filled from the ledger)."""
        return attempt_id in self._timelines.folds

    def open_attempts(self) -> int:
        return len(self._timelines.folds)


def traces(events: Iterable[AnyEvent], content: bool = False, attempt_id: str | None = None) -> list[AttemptTraceValue]:
    """Every ended attempt of these events (one conversation's, in seq order) as its trace; only ``attempt_id``'s
    when given."""
    found, folder = [], Traces(content)
    for event in events:
        if attempt_id is not None and getattr(event, "attempt_id", attempt_id) != attempt_id:
            continue
        if (value := folder.add(event)) is not None and value.final:
            found.append(value)
    return found


def _common(started: Started) -> Attrs:
    return (
        ("gen_ai.provider.name", provider_name(started.model)),
        ("gen_ai.request.model", model_name(started.model)),
        ("gen_ai.conversation.id", started.conversation_id),
        ("ledger.attempt_id", started.attempt_id),
    )


def early_spans(
    timeline: AttemptTimeline, ended: Iterable[tuple[str, str]], early: dict[int, SpanValue]
) -> list[SpanValue]:
    """The spans of the requests and tool calls that ``ended`` (``("chat" | "tool", id)``) inside the attempt so
    far, not made before (remembered in ``early``), timed within the attempt so far."""
    started, made = timeline.started, []
    tid, root = trace_id(started.attempt_id), span_id("agent", started.attempt_id)
    start = ts_ns(started.ts) or ts_ns(timeline.last_ts) or 0
    now = max(start, ts_ns(timeline.last_ts) or start)
    requests = {req.request_id: req for req in timeline.requests}
    tools = {tool.called.call_id: tool for tool in timeline.tools}
    for role, ended_id in ended:
        if role == "chat" and (req := requests.get(ended_id)) is not None:
            made.append(chat_span(timeline, req, tid, root, start, now, _common(started)))
        elif role == "tool" and (tool := tools.get(ended_id)) is not None:
            made += tool_spans(timeline, tool, tid, root, start, now, _common(started))
    made = [span for span in made if span.span_id not in early]
    early.update((span.span_id, span) for span in made)
    return made


def attempt_trace(timeline: AttemptTimeline, early: dict[int, SpanValue] | None = None) -> AttemptTraceValue:
    """The attempt's whole trace; a span already made early (``early``, by span id) is that same span."""
    started, early = timeline.started, early or {}
    tid, root = trace_id(started.attempt_id), span_id("agent", started.attempt_id)
    start = ts_ns(started.ts) or ts_ns(timeline.last_ts) or 0
    persisted_at = timeline.persisted.ts if timeline.persisted else None
    end = max(start, ts_ns(timeline.end_at) or ts_ns(persisted_at) or ts_ns(timeline.last_ts) or start)
    common = _common(started)
    spans = [root_span(timeline, tid, root, start, end, common)]
    spans += [
        early.get(span_id("chat", req.request_id)) or chat_span(timeline, req, tid, root, start, end, common)
        for req in timeline.requests
    ]
    for tool in timeline.tools:
        made = tool_spans(timeline, tool, tid, root, start, end, common)
        spans += [early.get(span.span_id, span) for span in made]
    return AttemptTraceValue(
        conversation_id=started.conversation_id,
        attempt_id=started.attempt_id,
        spans=tuple(spans),
        measurements=tuple(_measurements(timeline, spans)),
    )


def _measurements(timeline: AttemptTimeline, spans: list[SpanValue]) -> list[Measurement]:
    found = []
    for span, req in zip(spans[1 : 1 + len(timeline.requests)], timeline.requests, strict=True):
        keys = ("gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model", "error.type")
        attrs = tuple((k, v) for k in keys if (v := span.attribute(k)) is not None)
        found.append(
            Measurement(
                metric="gen_ai.client.operation.duration", value=(span.end_ns - span.start_ns) / 1e9, attributes=attrs
            )
        )
        if (ttfc := ms_between(req.sent.ts, req.first_arrival_ts)) is not None:
            found.append(
                Measurement(metric="gen_ai.client.operation.time_to_first_chunk", value=ttfc / 1000, attributes=attrs)
            )
        if req.usage is not None:
            for kind, value in (("input", req.usage.input_tokens), ("output", req.usage.output_tokens)):
                token_attrs = (*attrs, ("gen_ai.token.type", kind), ("ledger.usage.estimated", req.usage.estimated))
                found.append(Measurement(metric="gen_ai.client.token.usage", value=value, attributes=token_attrs))
        if req.closed is not None and (close_ms := req.closed.close_ms) is not None:
            close_attrs = (*attrs[:3], ("ledger.cancel_source", timeline.cancel_source or ""))
            found.append(
                Measurement(
                    metric="ledger.cancel.upstream_close.duration", value=close_ms / 1000, attributes=close_attrs
                )
            )
    return found
