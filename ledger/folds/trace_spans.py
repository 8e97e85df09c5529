"""The spans of one attempt's trace, made of its timeline (``ledger.folds.timeline``): the root, a request, a tool call.

Guarantees: pure; the names and attributes follow the OpenTelemetry GenAI conventions (``gen_ai.*``, ``error.type``,
``server.*``, MCP's ``mcp.method.name``) and the ledger's own are under ``ledger.``; every span lies inside its
root (times clamped to it); content attributes only when the timeline kept content.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from ledger.folds.timeline import AttemptTimeline, RequestTimeline, ToolTimeline
from ledger.folds.trace_values import Attrs, AttrValue, SpanEvent, SpanValue, span_id, ts_ns
from ledger.folds.trace_waits import question_spans

AGENT_NAME = "ledger_chat"
PROVIDERS = {
    "openai": "openai",
    "custom_openai": "openai",
    "azure": "azure.ai.openai",
    "anthropic": "anthropic",
    "gemini": "gcp.gemini",
    "vertex_ai": "gcp.vertex_ai",
    "bedrock": "aws.bedrock",
    "mistral": "mistral_ai",
    "groq": "groq",
    "deepseek": "deepseek",
    "xai": "x_ai",
    "cohere": "cohere",
    "perplexity": "perplexity",
    "ollama": "ollama",
    "ollama_chat": "ollama",
    "hosted_vllm": "vllm",
}
REQUEST_PARAMS = {"temperature", "max_tokens", "top_p", "top_k", "seed", "frequency_penalty", "presence_penalty"}
CANCEL_ENDS = {"cancelled", "recovered"}


def provider_name(model: str) -> str:
    """``gen_ai.provider.name`` for a litellm model string (its prefix; the demo model is ours)."""
    prefix, _, rest = model.partition("/")
    if not rest:
        return "ledger_chat.demo" if model == "demo" else "openai"
    return PROVIDERS.get(prefix, prefix)


def model_name(model: str) -> str:
    return model.partition("/")[2] or model


def span_status(kind: str | None, error_type: str | None, source: str | None) -> tuple[str, str | None, Attrs]:
    if kind in CANCEL_ENDS:
        return "error", f"cancelled ({source or 'unknown'})", (("error.type", "cancelled"),)
    if kind == "failed" or error_type:
        return "error", error_type, (("error.type", error_type or "unknown"),)
    return "unset", None, ()


def root_span(timeline: AttemptTimeline, tid: int, root: int, start: int, end: int, common: Attrs) -> SpanValue:
    status, message, error = span_status(timeline.end_kind, timeline.error_type, timeline.cancel_source)
    persisted = timeline.persisted
    attrs: list[tuple[str, AttrValue]] = [
        ("gen_ai.operation.name", "invoke_agent"),
        ("gen_ai.agent.name", AGENT_NAME),
        *common,
        *error,
        ("ledger.message_id", timeline.started.message_id),
        ("ledger.turn", timeline.started.turn),
        ("ledger.trigger", timeline.started.trigger),
        ("ledger.status", persisted.status if persisted else "unknown"),
        ("ledger.chunks", timeline.chunk_count),
        ("ledger.stale_chunks", timeline.stale_chunks),
        ("ledger.requests", len(timeline.requests)),
        ("ledger.tool_calls", len(timeline.tools)),
    ]
    if timeline.end_kind in CANCEL_ENDS:
        attrs += [
            ("gen_ai.response.finish_reasons", ("cancelled",)),
            ("ledger.cancel_source", timeline.cancel_source or ""),
        ]
    elif timeline.done is not None and timeline.done.finish_reason:
        attrs.append(("gen_ai.response.finish_reasons", (timeline.done.finish_reason,)))
    if timeline.requested_by:
        attrs.append(("ledger.cancel_requested_by", timeline.requested_by))
    if timeline.stale_results:
        attrs.append(("ledger.stale_tool_results", timeline.stale_results))
    closes = [r.closed.close_ms for r in timeline.requests if r.closed is not None and r.closed.close_ms is not None]
    if closes:
        attrs.append(("ledger.cancel_to_upstream_closed_ms", max(closes)))
    first = next(iter(timeline.requests), None)
    if first is not None and (ttfc := ms_between(first.sent.ts, first.first_arrival_ts)) is not None:
        attrs.append(("ledger.time_to_first_chunk_ms", ttfc))
    if persisted is not None and (m := persisted.metrics) is not None:
        attrs += [
            ("gen_ai.usage.input_tokens", m.input_tokens),
            ("gen_ai.usage.output_tokens", m.output_tokens),
            ("ledger.usage.input_estimated", m.input_is_estimated),
            ("ledger.usage.output_estimated", m.output_is_estimated),
        ]
    if timeline.content:
        if timeline.submitted is not None:
            attrs.append(("gen_ai.input.messages", messages("user", timeline.submitted.text)))
        attrs.append(("gen_ai.output.messages", messages("assistant", persisted.text if persisted else "")))
    events: tuple[SpanEvent, ...] = ()
    if timeline.cancel is not None and (at := ts_ns(timeline.cancel.ts)) is not None:
        events = (
            SpanEvent(
                name="ledger.cancel_requested",
                at_ns=at,
                attributes=(("ledger.cancel_source", timeline.cancel_source or ""),),
            ),
        )
    return SpanValue(
        trace_id=tid,
        span_id=root,
        parent_id=None,
        name=f"invoke_agent {AGENT_NAME}",
        kind="internal",
        start_ns=start,
        end_ns=end,
        attributes=tuple(attrs),
        status=status,  # type: ignore[arg-type]
        status_message=message,
        events=events,
    )


def chat_span(
    timeline: AttemptTimeline, req: RequestTimeline, tid: int, root: int, lo: int, hi: int, common: Attrs
) -> SpanValue:
    start = clamp(ts_ns(req.sent.ts), lo, hi)
    end = max(start, clamp(ts_ns(req.end_ts), lo, hi) if req.end_ts else hi)
    model = req.sent.model
    status, message, error = span_status(
        req.ended_by if req.ended_by in CANCEL_ENDS else None, req.error_type, timeline.cancel_source
    )
    attrs: list[tuple[str, AttrValue]] = [
        ("gen_ai.operation.name", "chat"),
        ("gen_ai.provider.name", provider_name(model)),
        ("gen_ai.request.model", model_name(model)),
        *common[2:],
        *error,
        ("ledger.request_id", req.request_id),
        ("ledger.step", req.step),
        ("ledger.chunks", req.chunk_count),
        ("ledger.stale_chunks", req.stale),
    ]
    for param in req.sent.params:
        if param.name == "api_base" and isinstance(param.value, str):
            parts = urlsplit(param.value)
            if parts.hostname:
                attrs.append(("server.address", parts.hostname))
            if parts.port:
                attrs.append(("server.port", parts.port))
        elif param.name in REQUEST_PARAMS and isinstance(param.value, int | float) and param.value is not None:
            attrs.append((f"gen_ai.request.{param.name}", param.value))
    if req.ended_by in CANCEL_ENDS:
        attrs += [
            ("gen_ai.response.finish_reasons", ("cancelled",)),
            ("ledger.cancel_source", timeline.cancel_source or ""),
        ]
    elif req.finish_reason:
        attrs.append(("gen_ai.response.finish_reasons", (req.finish_reason,)))
    if req.http_status is not None:
        attrs.append(("http.response.status_code", req.http_status))
    if req.error_type is not None:
        attrs.append(("ledger.will_retry", req.will_retry))
    if (ttfc := ms_between(req.sent.ts, req.first_arrival_ts)) is not None:
        attrs.append(("ledger.time_to_first_chunk_ms", ttfc))
    if req.closed is not None and req.closed.close_ms is not None:
        attrs.append(("ledger.cancel_to_upstream_closed_ms", req.closed.close_ms))
    if (u := req.usage) is not None:
        attrs += [
            ("gen_ai.usage.input_tokens", u.input_tokens),
            ("gen_ai.usage.output_tokens", u.output_tokens),
            ("gen_ai.usage.cache_read.input_tokens", u.cached_tokens),
            ("gen_ai.usage.cache_creation.input_tokens", u.cache_write_tokens),
            ("ledger.usage.reasoning_tokens", u.reasoning_tokens),
            ("ledger.usage.estimated", u.estimated),
            ("ledger.usage.partial", u.partial),
        ]
    if timeline.content:
        attrs.append(("gen_ai.output.messages", messages("assistant", req.text)))
    first = ts_ns(req.first_arrival_ts)
    events = (SpanEvent(name="ledger.first_chunk", at_ns=clamp(first, start, end)),) if first is not None else ()
    return SpanValue(
        trace_id=tid,
        span_id=span_id("chat", req.request_id),
        parent_id=root,
        name=f"chat {model_name(model)}",
        kind="client",
        start_ns=start,
        end_ns=end,
        attributes=tuple(attrs),
        status=status,  # type: ignore[arg-type]
        status_message=message,
        events=events,
    )


def tool_spans(
    timeline: AttemptTimeline, tool: ToolTimeline, tid: int, root: int, lo: int, hi: int, common: Attrs
) -> list[SpanValue]:
    spans, called = [], tool.called
    base = (*common[2:], ("gen_ai.tool.name", called.name), ("gen_ai.tool.call.id", called.call_id))
    result_at = clamp(ts_ns(tool.result_at), lo, hi) if tool.result_at else hi
    if tool.awaiting_at is not None:
        w_start = clamp(ts_ns(tool.awaiting_at), lo, hi)
        w_end = max(w_start, clamp(ts_ns(tool.dispatched_at), lo, hi) if tool.dispatched_at else result_at)
        outcome = "run" if tool.dispatched_at else (tool.status or "unknown")
        spans.append(
            SpanValue(
                trace_id=tid,
                span_id=span_id("wait", called.call_id),
                parent_id=root,
                name=f"await_approval {called.name}",
                kind="internal",
                start_ns=w_start,
                end_ns=w_end,
                attributes=(*base, ("ledger.wait", "approval"), ("ledger.wait.outcome", outcome)),
            )
        )
    spans += question_spans(tool.questions, base, tid, root, lo, hi, result_at, called.name)
    start = clamp(ts_ns(tool.dispatched_at or called.ts), lo, hi)
    ok = tool.status in ("ok", None) and tool.result_at is not None
    attrs: list[tuple[str, AttrValue]] = [
        ("gen_ai.operation.name", "execute_tool"),
        *base,
        ("gen_ai.tool.type", "extension"),
        ("mcp.method.name", "tools/call"),
        ("ledger.step", called.step),
        ("ledger.tool.status", tool.status or "unknown"),
        ("ledger.tool.result_size", tool.size),
    ]
    if tool.server:
        attrs.append(("ledger.tool.server", tool.server))
    if tool.duration_ms is not None:
        attrs.append(("ledger.tool.duration_ms", tool.duration_ms))
    if not ok:
        attrs.append(("error.type", "tool_error" if tool.status == "error" else tool.status or "unknown"))
    if timeline.content:
        attrs += [("gen_ai.tool.call.arguments", called.arguments), ("gen_ai.tool.call.result", tool.content or "")]
    spans.append(
        SpanValue(
            trace_id=tid,
            span_id=span_id("tool", called.call_id),
            parent_id=root,
            name=f"execute_tool {called.name}",
            kind="internal",
            start_ns=start,
            end_ns=max(start, result_at),
            attributes=tuple(attrs),
            status="unset" if ok else "error",
            status_message=None if ok else tool.status,
        )
    )
    return spans


def messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}], ensure_ascii=False)


def ms_between(start: str | None, end: str | None) -> float | None:
    a, b = ts_ns(start), ts_ns(end)
    return None if a is None or b is None else max(0.0, (b - a) / 1e6)


def clamp(value: int | None, lo: int, hi: int) -> int:
    return lo if value is None else min(max(value, lo), hi)
