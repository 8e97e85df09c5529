"""The audit panel's words: the name and second line of each timeline entry, an attempt's heading and its live
counters line (made here, from the pure audit projection ``ledger.folds.audit``; units from ``ui.format``).

Guarantees: pure functions of typed values; every phase kind of the audit has a label (``PHASE_LABELS``); an event
recorded after its attempt ended reads as late and "not applied".
"""

from __future__ import annotations

from ledger.events import Attachment
from ledger.folds import AttemptAudit, Phase, PhaseKind
from ui.approval_words import APPROVAL_LABELS, approval_detail
from ui.format import TOOL_STATUS_WORDS, duration, model_label, size, tokens, usage_tokens
from ui.server_words import LABELS as SERVER_LABELS
from ui.server_words import server_words

PHASE_LABELS: dict[PhaseKind, str] = {
    "submitted": "submitted",
    "started": "started",
    "request_sent": "request sent",
    "first_chunk": "first chunk",
    "chunks": "chunks",
    "cancel_requested": "cancel requested",
    "upstream_closed": "upstream closed",
    "cancelled": "cancelled",
    "recovered": "recovered",
    "request_failed": "request failed",
    "failed": "failed",
    "retrying": "retrying",
    "done": "done",
    "persisted": "persisted",
    "step_started": "next step",
    "step_finished": "step finished",
    "tool_call": "tool call",
    "tool_awaiting_approval": "waiting for approval",
    "tool_dispatched": "tool running",
    "tool_result": "tool result",
    "stale_tool_result": "stale tool result",
    **APPROVAL_LABELS,
}
PHASE_LABELS.update({"question_asked": "question asked", "question_answered": "question answered"})
PHASE_LABELS.update({"tool_server_used": SERVER_LABELS["tool_server_used"]})
PHASE_LABELS.update({"tool_server_gone": SERVER_LABELS["tool_server_gone"]})


def phase_label(phase: Phase) -> str:
    label = PHASE_LABELS[phase.kind]
    return f"late {label}" if phase.late else label


def phase_detail(p: Phase) -> str:
    """The second line of a timeline entry."""
    if p.late:
        what = f"{p.name or p.call_id} said {TOOL_STATUS_WORDS.get(p.status or '', p.status)}; " if p.status else ""
        return f"{what}recorded after the attempt ended: not applied (the first end stands)"
    error = f"{p.error_type}{f' HTTP {p.http_status}' if p.http_status else ''}: {p.summary}"
    match p.kind:
        case "started":
            return f"attempt {p.number} ({p.source})"
        case "request_sent":
            return model_label(p.model) if p.model else ""
        case "first_chunk":
            return f"+{p.ms:.0f} ms" if p.ms is not None else ""
        case "chunks":
            return f"{p.count} chunks, last seq {p.last_seq}"
        case "cancel_requested":
            return p.source or ""
        case "upstream_closed":
            return f"+{p.ms:.1f} ms after cancel" if p.ms is not None else ""
        case "cancelled":
            return f"{p.count} chars kept{', reported before the Stop: ' + usage_tokens(p.usage) if p.usage else ''}"
        case "recovered":
            return "interrupted by a restart"
        case "request_failed" | "failed":
            return f"{error}{' Reported before the end: ' + usage_tokens(p.usage) if p.usage else ''}"
        case "retrying":
            return "automatic re-send" if p.source == "auto" else "by the user"
        case "done":
            return f"{p.finish_reason}{', ' + usage_tokens(p.usage) if p.usage else ''}"
        case "persisted":
            return f"{p.status}{', ' + usage_tokens(p.usage) if p.usage else ''}"
        case "submitted":
            return "; ".join(file_words(a) for a in p.files)
        case "step_started":
            return f"step {p.step}: the model is called again with the tool results"
        case "step_finished":
            tail = f", {usage_tokens(p.usage)}" if p.usage else ""
            return f"step {p.step}: {p.finish_reason or 'stop'}{tail}"
        case "tool_call":
            return f"{p.name} (step {p.step})"
        case "tool_awaiting_approval":
            return f"{p.name}: Run or Skip"
        case "tool_dispatched":
            return f"{p.name} on {p.model}"
        case "tool_result":
            took = f" in {duration(p.ms)}" if p.ms is not None else ""
            return f"{p.name}: {TOOL_STATUS_WORDS.get(p.status or '', p.status)}, {size(p.count or 0)}{took}"
        case "stale_tool_result":
            return f"{p.call_id} ({p.source}): not shown"
        case "approval_asked" | "approval_given":
            return approval_detail(p)
        case "question_asked":  # the question (form|url)
            return f"{p.name}: {p.summary} ({p.source})"
        case "question_answered":  # the answer (by user|stop|restart|app), and why when the app answered it
            return f"{p.name}: {p.status} ({p.source}{f': {p.summary}' if p.summary else ''})"
        case "tool_server_used" | "tool_server_gone":  # which remote server ran the chat's tools, or that it went
            return server_words(p.server)


def audit_heading(a: AttemptAudit) -> str:
    what = {"compaction": "Summary of earlier turns · ", "title": "Chat title · "}.get(a.purpose, "")
    return f"{what}Turn {a.turn} · attempt {a.number} · {model_label(a.model)}"


def audit_counters(a: AttemptAudit) -> str:
    """The live counters line of an attempt in the audit panel."""
    parts = [f"status {a.status}", f"{a.chunk_count} chunks"]
    if a.sent_by:  # team mode: who sent the message (``local:<name>``: the name)
        parts.insert(0, f"sent by {a.sent_by.removeprefix('local:')}")
    if a.last_chunk_seq is not None:
        parts.append(f"last seq {a.last_chunk_seq}")
    parts.append(f"{a.stale_chunks} stale")
    if len(a.requests) > 1:
        parts.append(f"{len(a.requests)} requests")
    if a.cancel_source:
        parts.append(f"cancel: {'account disabled' if a.cancel_source == 'account' else a.cancel_source}")
    if a.upstream_close_ms is not None:
        parts.append(f"closed +{a.upstream_close_ms:.1f} ms")
    if a.steps > 1:
        parts.append(f"{a.steps} steps")
    if a.tool_calls:
        parts.append(f"{a.tool_calls} tool call{'s' if a.tool_calls > 1 else ''}")
    if a.stale_tool_results:
        parts.append(f"{a.stale_tool_results} stale tool result{'s' if a.stale_tool_results > 1 else ''}")
    if a.late_events:
        parts.append(f"{a.late_events} late event{'s' if a.late_events > 1 else ''} (not applied)")
    if a.error_type:
        parts.append(f"error: {a.error_type}")
    if a.metrics is not None:
        m = a.metrics
        parts.append(tokens(m.input_tokens, m.output_tokens, m.input_is_estimated, m.output_is_estimated))
    if a.first_chunk_ms is not None:
        parts.append(f"first chunk {duration(a.first_chunk_ms)}")
    if a.duration_ms is not None:
        parts.append(f"{a.duration_ms / 1000:.1f} s")
    return " · ".join(parts)


def file_words(a: Attachment) -> str:
    """A file of the message as the audit names it: its name, where a tool server gave it from, its sha256, and the
    sha256 it replaces (a Refresh of a resource)."""
    source = f" from {a.origin} {a.server} {a.ref}" if a.origin is not None else ""
    replaced = f" (refreshed: replaces sha256 {a.replaces})" if a.replaces else ""
    return f"{a.name}{source}, sha256 {a.sha256}{replaced}"
