"""The spans of one attempt's trace, made of its fold (``ledger.trace_fold``): the root, a request, a tool call.

Guarantees: pure; the names and attributes follow the OpenTelemetry GenAI conventions (``gen_ai.*``, ``error.type``,
``server.*``, MCP's ``mcp.method.name``) and the ledger's own are under ``ledger.``; every span lies inside its
root (times clamped to it); content attributes only when the fold was asked for content.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from ledger.trace_fold import AttemptFold, RequestFold, ToolFold
from ledger.trace_values import Attrs, AttrValue, SpanEvent, SpanValue, span_id, ts_ns
from ledger.trace_waits import question_spans

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


def root_span(fold: AttemptFold, tid: int, root: int, start: int, end: int, common: Attrs) -> SpanValue:
    status, message, error = span_status(fold.end_kind, fold.error_type, fold.cancel_source)
    attrs: list[tuple[str, AttrValue]] = [
        ("gen_ai.operation.name", "invoke_agent"),
        ("gen_ai.agent.name", AGENT_NAME),
        *common,
        *error,
        ("ledger.message_id", fold.started.message_id),
        ("ledger.turn", fold.started.turn),
        ("ledger.trigger", fold.started.trigger),
        ("ledger.status", fold.status or "unknown"),
        ("ledger.chunks", fold.chunks),
        ("ledger.stale_chunks", fold.stale),
        ("ledger.requests", len(fold.requests)),
        ("ledger.tool_calls", len(fold.tools)),
    ]
    if fold.end_kind in CANCEL_ENDS:
        attrs += [
            ("gen_ai.response.finish_reasons", ("cancelled",)),
            ("ledger.cancel_source", fold.cancel_source or ""),
        ]
    elif fold.finish_reason:
        attrs.append(("gen_ai.response.finish_reasons", (fold.finish_reason,)))
    if fold.requested_by:
        attrs.append(("ledger.cancel_requested_by", fold.requested_by))
    if fold.stale_results:
        attrs.append(("ledger.stale_tool_results", fold.stale_results))
    closes = [r.close_ms for r in fold.requests.values() if r.close_ms is not None]
    if closes:
        attrs.append(("ledger.cancel_to_upstream_closed_ms", max(closes)))
    first = next(iter(fold.requests.values()), None)
    if first is not None and (ttfc := ms_between(first.sent, first.first_chunk)) is not None:
        attrs.append(("ledger.time_to_first_chunk_ms", ttfc))
    if (m := fold.metrics) is not None:
        attrs += [
            ("gen_ai.usage.input_tokens", m.input_tokens),
            ("gen_ai.usage.output_tokens", m.output_tokens),
            ("ledger.usage.input_estimated", m.input_is_estimated),
            ("ledger.usage.output_estimated", m.output_is_estimated),
        ]
    if fold.content:
        if fold.question is not None:
            attrs.append(("gen_ai.input.messages", messages("user", fold.question)))
        attrs.append(("gen_ai.output.messages", messages("assistant", fold.text)))
    events: tuple[SpanEvent, ...] = ()
    if fold.cancel_at is not None and (at := ts_ns(fold.cancel_at)) is not None:
        events = (
            SpanEvent(
                name="ledger.cancel_requested",
                at_ns=at,
                attributes=(("ledger.cancel_source", fold.cancel_source or ""),),
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


def chat_span(fold: AttemptFold, req: RequestFold, tid: int, root: int, lo: int, hi: int, common: Attrs) -> SpanValue:
    start = clamp(ts_ns(req.sent), lo, hi)
    end = max(start, clamp(ts_ns(req.end), lo, hi) if req.end else hi)
    status, message, error = span_status(
        req.ended_by if req.ended_by in CANCEL_ENDS else None, req.error_type, fold.cancel_source
    )
    attrs: list[tuple[str, AttrValue]] = [
        ("gen_ai.operation.name", "chat"),
        ("gen_ai.provider.name", provider_name(req.model)),
        ("gen_ai.request.model", model_name(req.model)),
        *common[2:],
        *error,
        ("ledger.request_id", req.request_id),
        ("ledger.step", req.step),
        ("ledger.chunks", req.chunks),
        ("ledger.stale_chunks", req.stale),
    ]
    for param in req.params:
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
            ("ledger.cancel_source", fold.cancel_source or ""),
        ]
    elif req.finish_reason:
        attrs.append(("gen_ai.response.finish_reasons", (req.finish_reason,)))
    if req.http_status is not None:
        attrs.append(("http.response.status_code", req.http_status))
    if req.error_type is not None:
        attrs.append(("ledger.will_retry", req.will_retry))
    if (ttfc := ms_between(req.sent, req.first_chunk)) is not None:
        attrs.append(("ledger.time_to_first_chunk_ms", ttfc))
    if req.close_ms is not None:
        attrs.append(("ledger.cancel_to_upstream_closed_ms", req.close_ms))
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
    if fold.content:
        attrs.append(("gen_ai.output.messages", messages("assistant", "".join(req.text))))
    first = ts_ns(req.first_chunk)
    events = (SpanEvent(name="ledger.first_chunk", at_ns=clamp(first, start, end)),) if first is not None else ()
    return SpanValue(
        trace_id=tid,
        span_id=span_id("chat", req.request_id),
        parent_id=root,
        name=f"chat {model_name(req.model)}",
        kind="client",
        start_ns=start,
        end_ns=end,
        attributes=tuple(attrs),
        status=status,  # type: ignore[arg-type]
        status_message=message,
        events=events,
    )


def tool_spans(
    fold: AttemptFold, tool: ToolFold, tid: int, root: int, lo: int, hi: int, common: Attrs
) -> list[SpanValue]:
    spans = []
    base = (*common[2:], ("gen_ai.tool.name", tool.name), ("gen_ai.tool.call.id", tool.call_id))
    result_at = clamp(ts_ns(tool.result_at), lo, hi) if tool.result_at else hi
    if tool.awaiting_at is not None:
        w_start = clamp(ts_ns(tool.awaiting_at), lo, hi)
        w_end = max(w_start, clamp(ts_ns(tool.dispatched_at), lo, hi) if tool.dispatched_at else result_at)
        outcome = "run" if tool.dispatched_at else (tool.status or "unknown")
        spans.append(
            SpanValue(
                trace_id=tid,
                span_id=span_id("wait", tool.call_id),
                parent_id=root,
                name=f"await_approval {tool.name}",
                kind="internal",
                start_ns=w_start,
                end_ns=w_end,
                attributes=(*base, ("ledger.wait", "approval"), ("ledger.wait.outcome", outcome)),
            )
        )
    spans += question_spans(tool.questions, base, tid, root, lo, hi, result_at, tool.name)
    start = clamp(ts_ns(tool.dispatched_at or tool.called_at), lo, hi)
    ok = tool.status in ("ok", None) and tool.result_at is not None
    attrs: list[tuple[str, AttrValue]] = [
        ("gen_ai.operation.name", "execute_tool"),
        *base,
        ("gen_ai.tool.type", "extension"),
        ("mcp.method.name", "tools/call"),
        ("ledger.step", tool.step),
        ("ledger.tool.status", tool.status or "unknown"),
        ("ledger.tool.result_size", tool.size),
    ]
    if tool.server:
        attrs.append(("ledger.tool.server", tool.server))
    if tool.duration_ms is not None:
        attrs.append(("ledger.tool.duration_ms", tool.duration_ms))
    if not ok:
        attrs.append(("error.type", "tool_error" if tool.status == "error" else tool.status or "unknown"))
    if fold.content:
        attrs += [("gen_ai.tool.call.arguments", tool.arguments), ("gen_ai.tool.call.result", tool.content or "")]
    spans.append(
        SpanValue(
            trace_id=tid,
            span_id=span_id("tool", tool.call_id),
            parent_id=root,
            name=f"execute_tool {tool.name}",
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
