"""The trace projection: each attempt as OpenTelemetry GenAI spans, from the ledger alone (pure, deterministic).

Guarantees:
- One trace per attempt: an ``invoke_agent`` root span (started → its end), a ``chat {model}`` client span per
  request (re-sends are their own spans; sent → done / failed / upstream closed), an ``execute_tool {name}``
  span per tool call (dispatched → result; MCP's ``tools/call``), an ``await_approval {name}`` span per wait for a
  person. Times are the events' ``ts``; ids are hashes of the ledger's ids (``ledger.trace_values``), so the same
  events always give the same spans, live (``Traces.add``, event by event) or back-filled (``traces``).
- Spans are ready as their events land: a ``chat`` span when its request ends inside the attempt (its step
  finished, or it failed and is re-sent), an ``execute_tool`` span (and its wait) when its result
  lands; the root and whatever is still open when the attempt's ``persisted`` lands. A span made early is never
  made again: the attempt's final value reuses it, so live and back-filled spans are the same by construction.
- A cancel is an error status with ``error.type`` ``cancelled``, finish reason ``cancelled`` and the source in
  ``ledger.cancel_source``; a failure is an error with the ledger's ``error_type``; never a success.
- Message content (the question, the answer, tool arguments and results) only when ``content`` is True; a
  request's parameters are never secrets (``request_sent``). Key redaction of content is the exporter's.
"""

from __future__ import annotations

from collections.abc import Iterable

from ledger.events import AnyEvent, Chunk, Started, Submitted
from ledger.trace_fold import AttemptFold
from ledger.trace_spans import chat_span, model_name, ms_between, provider_name, root_span, tool_spans
from ledger.trace_values import AttemptTraceValue, Attrs, Measurement, SpanValue, span_id, trace_id, ts_ns

__all__ = ["Traces", "attempt_trace", "provider_name", "traces"]


class Traces:
    """Attempts followed as their events land. ``add`` returns the spans an event made ready (``final`` False), or,
    once the attempt's ``persisted`` came, its whole trace (``final`` True: every span, those sent early included,
    and the measurements)."""

    def __init__(self, content: bool = False) -> None:
        self.content = content
        self._folds: dict[str, AttemptFold] = {}
        self._early: dict[str, dict[int, SpanValue]] = {}
        self._questions: dict[str, str] = {}

    def add(self, event: AnyEvent) -> AttemptTraceValue | None:
        if type(event) is Chunk:  # the hot path: one dict lookup and a few counters
            fold = self._folds.get(event.attempt_id)
            if fold is not None:
                fold.add(event)
            return None
        if isinstance(event, Submitted) and self.content:
            self._questions[event.message_id] = event.text
        if isinstance(event, Started):
            question = self._questions.pop(event.user_message_id, None)
            self._folds[event.attempt_id] = AttemptFold(event, self.content, question)
            return None
        fold = self._folds.get(getattr(event, "attempt_id", None) or "")
        if fold is None:
            return None
        if fold.add(event):
            del self._folds[fold.started.attempt_id]
            return attempt_trace(fold, self._early.pop(fold.started.attempt_id, None))
        if not fold.ended_early:
            return None
        early = self._early.setdefault(fold.started.attempt_id, {})
        spans = early_spans(fold, early)
        if not spans:
            return None
        return AttemptTraceValue(
            conversation_id=fold.started.conversation_id,
            attempt_id=fold.started.attempt_id,
            spans=tuple(spans),
            measurements=(),
            final=False,
        )

    def follows(self, attempt_id: str) -> bool:
        """Whether this attempt's ``started`` was seen (its end alone is back-filled from the ledger)."""
        return attempt_id in self._folds

    def open_attempts(self) -> int:
        return len(self._folds)


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


def early_spans(fold: AttemptFold, early: dict[int, SpanValue]) -> list[SpanValue]:
    """The spans of the requests and tool calls that ended since the last call (remembered in ``early``), timed
    within the attempt so far."""
    started, made = fold.started, []
    tid, root = trace_id(started.attempt_id), span_id("agent", started.attempt_id)
    start = ts_ns(started.ts) or ts_ns(fold.last_ts) or 0
    now = max(start, ts_ns(fold.last_ts) or start)
    for role, ended_id in fold.ended_early:
        if role == "chat" and (req := fold.requests.get(ended_id)) is not None:
            made.append(chat_span(fold, req, tid, root, start, now, _common(started)))
        elif role == "tool" and (tool := fold.tools.get(ended_id)) is not None:
            made += tool_spans(fold, tool, tid, root, start, now, _common(started))
    fold.ended_early.clear()
    made = [span for span in made if span.span_id not in early]
    early.update((span.span_id, span) for span in made)
    return made


def attempt_trace(fold: AttemptFold, early: dict[int, SpanValue] | None = None) -> AttemptTraceValue:
    """The attempt's whole trace; a span already made early (``early``, by span id) is that same span."""
    started, early = fold.started, early or {}
    tid, root = trace_id(started.attempt_id), span_id("agent", started.attempt_id)
    start = ts_ns(started.ts) or ts_ns(fold.last_ts) or 0
    end = max(start, ts_ns(fold.end_at) or ts_ns(fold.persisted_at) or ts_ns(fold.last_ts) or start)
    common = _common(started)
    spans = [root_span(fold, tid, root, start, end, common)]
    spans += [
        early.get(span_id("chat", req.request_id)) or chat_span(fold, req, tid, root, start, end, common)
        for req in fold.requests.values()
    ]
    for tool in fold.tools.values():
        made = tool_spans(fold, tool, tid, root, start, end, common)
        spans += [early.get(span.span_id, span) for span in made]
    return AttemptTraceValue(
        conversation_id=started.conversation_id,
        attempt_id=started.attempt_id,
        spans=tuple(spans),
        measurements=tuple(_measurements(fold, spans)),
    )


def _measurements(fold: AttemptFold, spans: list[SpanValue]) -> list[Measurement]:
    found = []
    for span, req in zip(spans[1 : 1 + len(fold.requests)], fold.requests.values(), strict=True):
        keys = ("gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model", "error.type")
        attrs = tuple((k, v) for k in keys if (v := span.attribute(k)) is not None)
        found.append(
            Measurement(
                metric="gen_ai.client.operation.duration", value=(span.end_ns - span.start_ns) / 1e9, attributes=attrs
            )
        )
        if (ttfc := ms_between(req.sent, req.first_chunk)) is not None:
            found.append(
                Measurement(metric="gen_ai.client.operation.time_to_first_chunk", value=ttfc / 1000, attributes=attrs)
            )
        if req.usage is not None:
            for kind, value in (("input", req.usage.input_tokens), ("output", req.usage.output_tokens)):
                token_attrs = (*attrs, ("gen_ai.token.type", kind), ("ledger.usage.estimated", req.usage.estimated))
                found.append(Measurement(metric="gen_ai.client.token.usage", value=value, attributes=token_attrs))
        if req.close_ms is not None:
            close_attrs = (*attrs[:3], ("ledger.cancel_source", fold.cancel_source or ""))
            found.append(
                Measurement(
                    metric="ledger.cancel.upstream_close.duration", value=req.close_ms / 1000, attributes=close_attrs
                )
            )
    return found
