"""Every status, time and count the page shows is the ledger's (issue 40: "a card or a time that says something the
ledger does not"): for random sessions (Stop, Retry, Continue, tool calls with every outcome, questions,
approvals, errors, recoveries), the words the page's own functions make from the reducer's state (``ui.format``,
``ui.tool_card``, ``ui.answer_status``) say what the audit panel's fold of the same events says
(``ledger.folds.audit``, read by ``ui.audit_words``), and the counts agree with the events themselves."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings

from ledger.events.core import Chunk, Persisted, StaleChunk, Started
from ledger.folds.audit import AttemptAudit, audit
from ledger.reducer import replay
from ledger.state import AttemptState, ConversationState, ToolCallState
from tests.support.random_sessions import CONV, build_events
from tests.support.session_steps import lived_sessions
from ui.answer_status import DOM_STATUS
from ui.audit_words import audit_counters
from ui.format import ERROR_TITLES, clock, error_title, metrics_line, stopped_text, tool_state_words
from ui.tool_card import card_status

SESSIONS = lived_sessions


def page_words(conv: ConversationState, attempt: AttemptState) -> dict[str, str]:
    """What the page shows of one attempt, made by the page's functions from the reducer's state."""
    message = conv.messages[attempt.message_id]
    words = {
        "status": DOM_STATUS[attempt.status],
        "attempt": f"{message.attempt_ids.index(attempt.attempt_id) + 1}/{len(message.attempt_ids)}",
        "footer": metrics_line(attempt.metrics),
        "completed": clock(attempt.metrics.completed_at).text
        if attempt.metrics and attempt.metrics.completed_at
        else "",
    }
    if attempt.status in ("interrupted", "empty"):
        words["stopped"] = stopped_text(attempt)
    if attempt.status == "failed":
        words["error"] = error_title(attempt)
    for call in attempt.tool_calls.values():
        words[f"card {call.call_id}"] = tool_state_words(card_status(call, attempt.is_live))
    return words


#: what a tool card must say of a call: its result, else (its attempt live) where it is, else (its attempt over)
#: what the ledger knows of it: dispatched and unanswered is an unknown outcome, anything earlier was never sent
RESULT_WORDS = {"ok": "done", "error": "error", "cancelled": "cancelled", "not_run": "not run",
                "declined": "declined", "unknown": "unknown outcome"}  # fmt: skip
LIVE_WORDS = {"streaming": "the model is writing this call", "ready": "about to run",
              "waiting": "waiting for your approval", "running": "running"}  # fmt: skip
OVER_WORDS = {"running": "unknown outcome"}
OMITTED = "not sent: stopped while the model was writing it"


def card_words(call: ToolCallState, attempt_live: bool) -> str:
    if call.status is not None:
        return RESULT_WORDS[call.status]
    return LIVE_WORDS[call.phase] if attempt_live else OVER_WORDS.get(call.phase, OMITTED)


#: the cause a Stop's words name, by the ledger's cancel source (a person's own Stop names none)
CAUSE_WORDS = {None: None, "user": None, "navigation": "you left the chat", "disconnect": "the page was closed",
               "shutdown": "the server stopped", "restart": "the server restarted",
               "timeout": "the provider stopped answering", "delete": "deleted"}  # fmt: skip


#: the page's status words an attempt's first applied end (or its ``persisted`` without one) allows
BY_END = {
    "done": {"complete"},
    "failed": {"failed"},
    "cancelled": {"interrupted", "empty"},
    "recovered": {"interrupted", "empty"},
    "persisted": {"complete"},  # a ``persisted`` with no end before it: its own status (``complete`` here)
    None: {"streaming"},
}


def ledger_words(audited: AttemptAudit, total: int) -> dict[str, str]:
    """The values the audit panel's fold of the events says (its phases that were applied), and the count of the
    message's ``started`` events."""
    m = audited.metrics
    return {
        "attempt": f"{audited.number}/{total}",
        "footer": metrics_line(m),
        "completed": clock(m.completed_at).text if m and m.completed_at else "",
    }


def first_end(audited: AttemptAudit) -> str | None:
    applied = [p.kind for p in audited.phases if not p.late]
    return next((k for k in applied if k in ("done", "failed", "cancelled", "recovered", "persisted")), None)


@settings(max_examples=300, deadline=None)
@given(SESSIONS)
def test_every_status_count_and_time_the_page_shows_is_what_the_ledger_says(plan: list[tuple]) -> None:
    events = build_events(plan)
    conv = replay(events).conversations.get(CONV)
    if conv is None:
        return
    audits = {a.attempt_id: a for a in audit(events)}
    started_per_message = Counter(e.message_id for e in events if isinstance(e, Started))
    for attempt in conv.attempts.values():
        audited = audits[attempt.attempt_id]
        shown = page_words(conv, attempt)
        said = ledger_words(audited, started_per_message[attempt.message_id])
        assert {k: shown[k] for k in said} == said, (attempt, audited)
        ends = [e for e in events if isinstance(e, Persisted) and e.attempt_id == attempt.attempt_id]
        if attempt.persisted:  # the tokens and time the page shows are the ones the ledger's ``persisted`` recorded
            m = ends[0].metrics
            assert shown["completed"] == f"{(m.completed_at or '')[11:19]} UTC", (shown, ends)
            mark = "~" if m.input_is_estimated else ""
            assert shown["footer"].startswith(f"{mark}{m.input_tokens:,} in · "), (shown, m)
        assert shown["status"] in BY_END[first_end(audited)], (shown, audited.phases)
        own = [e for e in events if getattr(e, "attempt_id", None) == attempt.attempt_id]
        chunks = sum(isinstance(e, (Chunk, StaleChunk)) for e in own)
        counters = audit_counters(audited)
        assert audited.chunk_count + audited.stale_chunks == chunks == attempt.chunks_received, counters
        assert f"{audited.chunk_count} chunks" in counters and f"{audited.stale_chunks} stale" in counters
        if "stopped" in shown:
            cause = CAUSE_WORDS[audited.cancel_source]  # the cause the ledger recorded, in the page's words
            empty = "Stopped before any text" + (f" ({cause})" if cause else "")
            assert shown["stopped"] == (
                empty if attempt.status == "empty" else f"Stopped: {cause}" if cause else "Stopped"
            )
        if "error" in shown:
            assert shown["error"].startswith(ERROR_TITLES.get(audited.error_type or "", "Failed")), shown
        for call in attempt.tool_calls.values():
            assert shown[f"card {call.call_id}"] == card_words(call, attempt.is_live), (call, attempt.status)
