"""The spans of a tool call's questions to a person (MCP elicitation): one ``await_answer {tool}`` span per question,
from the moment it was asked to its answer (or to the end of the call, when none came).

Guarantees: pure; a span per ``question_asked``, parented to the attempt's root like the call's own span, its id
hashed from the question id (``span_id("question", question_id)``), so a back-fill repeats it; the wait's outcome
(``accept`` / ``decline`` / ``cancel``, and who answered: the user, a Stop, a restart) in ``ledger.`` attributes,
and MCP's method (``elicitation/create`` on 2025-11-25; an ``input_required`` result on 2026-07-28). A question
that was cancelled or left unanswered is an error span, never a success. The question's message and the values
typed only when content was asked for.
"""

from __future__ import annotations

from ledger.folds.timeline_values import QuestionTimeline
from ledger.folds.trace_values import Attrs, AttrValue, SpanValue, span_id, ts_ns

METHODS = {"2025-11-25": "elicitation/create"}  # newer revisions carry the question in the call's own result


def question_spans(
    questions: tuple[QuestionTimeline, ...], base: Attrs, tid: int, root: int, lo: int, hi: int, until: int, tool: str
) -> list[SpanValue]:
    """``until``: when the call ended (a question never answered waits until then)."""
    spans = []
    for q in questions:
        start = min(max(ts_ns(q.asked_at) or lo, lo), hi)
        end = max(start, min(max(ts_ns(q.answered_at) or until, lo), hi) if q.answered_at else until)
        attrs: list[tuple[str, AttrValue]] = [
            *base,
            ("ledger.wait", "question"),
            ("ledger.question.id", q.question_id),
            ("ledger.question.mode", q.mode),
            ("ledger.wait.outcome", q.action or "unanswered"),
            ("mcp.protocol.version", q.revision),
        ]
        if (method := METHODS.get(q.revision)) is not None:
            attrs.append(("mcp.method.name", method))
        if q.by is not None:
            attrs.append(("ledger.question.answered_by", q.by))
        if q.message is not None:
            attrs.append(("ledger.question.message", q.message))
        if q.content is not None:
            attrs.append(("ledger.question.answer", q.content))
        ok = q.action in ("accept", "decline")
        spans.append(
            SpanValue(
                trace_id=tid,
                span_id=span_id("question", q.question_id),
                parent_id=root,
                name=f"await_answer {tool}",
                kind="internal",
                start_ns=start,
                end_ns=end,
                attributes=tuple(attrs),
                status="unset" if ok else "error",
                status_message=None if ok else (q.action or "unanswered"),
            )
        )
    return spans
