"""Every word and unit the page shows for a number, a time or a ledger value, made in this one place.

Guarantees: pure functions of typed values (no NiceGUI, no clock); tokens "~N in · ~N out" ("~": counted locally);
durations "N ms" / "N.N s"; ``Clock`` times the browser shows in its local time; approvals: ``ui.approval_words``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from ledger.events import TurnMetrics, Usage
from ledger.state import AttemptState

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
    "account": "the account was disabled",
    "acp": "the editor stopped it",
}
ERROR_TITLES = {
    "rate_limit": "Rate limited",
    "auth": "Not authorized",
    "server": "Provider error",
    "timeout": "Timed out",
    "connection": "Connection lost",
    "malformed_stream": "Broken stream",
    "bad_request": "Request rejected",
    "step_limit": "Step limit reached",
    "tool_loop": "Tool loop stopped",
    "spend_limit": "Spend limit reached",
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


def date_time(iso: str) -> str:
    """A moment as its date and time in UTC ("2026-12-04 01:47 UTC"): for what may be days old."""
    return f"{iso[:10]} {iso[11:16]} UTC" if len(iso) >= 16 else iso


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


FAR_BACK = (
    "The message that matched is further back than a chat opened from a search shows; press "
    "“Show earlier messages” to reach it."
)
