"""Every word and unit the page shows for a number, a time or a ledger value, made in this one place.

Guarantees: pure functions of typed values (no NiceGUI, no clock); tokens read "~N in · ~N out" wherever they
appear ("~" when counted locally); durations "N ms" under a second, "N.N s" above; times are given as
``Clock`` values (the UTC fallback text plus the ISO instant) that the browser turns into its local time.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from ledger.audit import AttemptAudit, Phase, PhaseKind
from ledger.events import TurnMetrics, Usage
from ledger.state import AttemptState

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
}
TOOL_STATUS_WORDS = {
    "ok": "done",
    "error": "error",
    "cancelled": "cancelled",
    "not_run": "not run",
    "declined": "declined",
    "unknown": "unknown outcome",
}
CAUSES = {
    "navigation": "you left the chat",
    "disconnect": "the page was closed",
    "shutdown": "the server stopped",
    "restart": "the server restarted",
    "timeout": "the provider stopped answering",
    "delete": "deleted",
}
ERROR_TITLES = {
    "rate_limit": "Rate limited",
    "auth": "Not authorized",
    "server": "Provider error",
    "timeout": "Timed out",
    "connection": "Connection lost",
    "malformed_stream": "Broken stream",
    "bad_request": "Request rejected",
}


@dataclass(frozen=True, slots=True)
class Clock:
    """A moment to show: ``text`` until the browser rewrites it in its own time zone from ``iso``."""

    iso: str
    text: str


def clock(iso: str, *, millis: bool = False) -> Clock:
    """The UTC fallback ("15:44:03 UTC"); the page's script shows the browser's local time instead."""
    end = 23 if millis else 19
    return Clock(iso=iso, text=f"{iso[11:end]} UTC" if len(iso) >= end else iso)


TOOL_STATES = {
    "writing": "the model is writing this call",
    "queued": "about to run",
    "waiting": "waiting for your approval",
    "running": "running",
    "done": "done",
    "error": "error",
    "cancelled": "cancelled",
    "not_run": "not run",
    "declined": "declined",
    "unknown": "unknown outcome",
    "omitted": "not sent: stopped while the model was writing it",
}


def tool_state_words(status: str) -> str:
    return TOOL_STATES.get(status, status)


def announcement(attempt: AttemptState) -> str:
    """What a screen reader hears once when an answer ends."""
    if attempt.status == "complete":
        return "Answer complete."
    if attempt.status in ("interrupted", "empty"):
        return stopped_text(attempt) + "."
    if attempt.status == "failed":
        return f"{error_title(attempt)}: {attempt.error_summary or 'the answer failed.'}"
    return ""


def model_label(model: str) -> str:
    """How a model is named on the page: the litellm string, the demo model by its purpose."""
    return "demo model (offline)" if model == "openai/ledger-demo" else model


def size(chars: int) -> str:
    if chars < 1000:
        return f"{chars} chars"
    return f"{chars / 1000:.1f}k chars" if chars < 1_000_000 else f"{chars / 1_000_000:.1f}M chars"


def earlier_messages(count: int) -> str:
    """The label of the transcript's "Show earlier messages" button."""
    return f"Show {count} earlier message{'' if count == 1 else 's'}"


CHAT_LIST_KEYS = "Arrow keys move between chats; F2 renames, Delete deletes the chat focused."  # the list says
CHAT_LIST_WORDS = {"rename": "Rename", "remove": "Delete", "live": "Streaming", "keys": CHAT_LIST_KEYS}


def more_chats(count: int) -> str:
    """The label of the conversation list's "Show more" button."""
    return f"Show {count} more" if count != 1 else "Show 1 more"


def day_group(iso: str, today: date) -> str:
    """Today, Yesterday, Previous 7 days, Previous 30 days, or the month (dates in UTC)."""
    try:
        day = datetime.fromisoformat(iso).date()
    except ValueError:
        return "Older"
    days = (today - day).days
    if days <= 0:
        return "Today"
    if days == 1:
        return "Yesterday"
    if days < 7:
        return "Previous 7 days"
    if days < 30:
        return "Previous 30 days"
    return day.strftime("%B %Y")


def duration(ms: float) -> str:
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def tokens(input_tokens: int, output_tokens: int, estimated: bool, output_estimated: bool | None = None) -> str:
    """``~`` marks a count made locally: the input's by ``estimated``, the output's by ``output_estimated``
    (the same as the input's when not given)."""
    mark = "~" if estimated else ""
    out_mark = mark if output_estimated is None else "~" if output_estimated else ""
    return f"{mark}{input_tokens:,} in · {out_mark}{output_tokens:,} out"


def usage_tokens(usage: Usage | None) -> str:
    if usage is None:
        return ""
    if usage.partial and not usage.output_tokens:  # reported before the end: the prompt side only
        return f"{'~' if usage.estimated else ''}{usage.input_tokens:,} in"
    return tokens(usage.input_tokens, usage.output_tokens, usage.estimated, usage.estimated or usage.partial)


def metrics_line(m: TurnMetrics | None) -> str:
    """The footer of an answer: tokens, cache, time to first chunk, streaming time (the time is shown apart)."""
    if m is None:
        return ""
    parts = [tokens(m.input_tokens, m.output_tokens, m.input_is_estimated, m.output_is_estimated)]
    if m.reasoning_tokens:
        parts.append(f"{m.reasoning_tokens:,} reasoning")
    if m.cached_tokens:
        parts.append(f"{m.cached_tokens:,} cached")
    if m.wait_ms is not None:
        parts.append(f"first chunk {duration(m.wait_ms)}")
    if m.output_ms is not None:
        parts.append(f"{duration(m.output_ms)} streaming")
    line = " · ".join(parts)
    return line + (" (~ estimated)" if m.estimated else "")


def user_line(m: TurnMetrics | None, text: str) -> str:
    """Under a user message: what that message alone weighs (~4 characters a token; the whole prompt of the turn
    is on its answer's line)."""
    return f"~{max(1, round(len(text) / 4)):,} tokens" if m is not None and text else ""


def error_title(attempt: AttemptState) -> str:
    title = ERROR_TITLES.get(attempt.error_type or "", "Failed")
    return f"{title} (HTTP {attempt.http_status})" if attempt.http_status else title


def stopped_text(attempt: AttemptState) -> str:
    cause = CAUSES.get(attempt.cancel_source or "")
    if attempt.status == "empty":
        return "Stopped before any text" + (f" ({cause})" if cause else "")
    return f"Stopped: {cause}" if cause else "Stopped"


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
            return ""
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


def audit_heading(a: AttemptAudit) -> str:
    return f"Turn {a.turn} · attempt {a.number} · {model_label(a.model)}"


def audit_counters(a: AttemptAudit) -> str:
    """The live counters line of an attempt in the audit panel."""
    parts = [f"status {a.status}", f"{a.chunk_count} chunks"]
    if a.last_chunk_seq is not None:
        parts.append(f"last seq {a.last_chunk_seq}")
    parts.append(f"{a.stale_chunks} stale")
    if len(a.requests) > 1:
        parts.append(f"{len(a.requests)} requests")
    if a.cancel_source:
        parts.append(f"cancel: {a.cancel_source}")
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
