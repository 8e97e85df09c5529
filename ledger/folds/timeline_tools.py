"""The tool calls of one attempt's timeline while it is folded (``ledger.folds.timeline_fold``): each complete call, its
wait for a person, its dispatch, its first result and its questions.

Guarantees: pure; fed only the events the one-end rule applied (``ledger.ends``); a call keeps its first result
(a later one changes nothing here, the stale rule's ``stale_tool_result`` is counted by the fold); a call still
without a result when its attempt ends is closed at that end (``ToolRecord.end``); a question keeps its first
answer; texts (the result, the question and its answer) only when content is asked for.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import assert_never

from ledger.events import (
    ApprovalAsked,
    QuestionAnswered,
    QuestionAsked,
    ToolAwaitingApproval,
    ToolCalled,
    ToolDispatched,
    ToolResult,
)
from ledger.folds.timeline_values import QuestionTimeline, ToolTimeline

ToolEvent = ToolCalled | ToolAwaitingApproval | ApprovalAsked | ToolDispatched | ToolResult | QuestionAsked
ToolEvents = ToolEvent | QuestionAnswered


@dataclass(slots=True)
class ToolRecord:
    """A call while its attempt is folded: its value so far and its questions."""

    value: ToolTimeline
    questions: list[QuestionTimeline] = field(default_factory=list)

    def freeze(self) -> ToolTimeline:
        return replace(self.value, questions=tuple(self.questions))

    def end(self, ts: str) -> None:
        """Its attempt ended: a call still without a result ends there."""
        if self.value.result_at is None:
            self.value = replace(self.value, result_at=ts)


def tool_moment(tools: dict[str, ToolRecord], event: ToolEvents, content: bool, ended: list[tuple[str, str]]) -> None:
    """Folds one applied event of a tool call into ``tools`` (by call id); a first result is added to ``ended``."""
    if isinstance(event, ToolCalled):
        tools[event.call_id] = ToolRecord(ToolTimeline(called=event, server=event.server))
        return
    if (tool := tools.get(event.call_id)) is None:
        return
    value = tool.value
    match event:
        case ToolAwaitingApproval() | ApprovalAsked():
            tool.value = replace(value, awaiting_at=event.ts)
        case ToolDispatched():
            tool.value = replace(value, dispatched_at=event.ts, server=event.server)
        case ToolResult():
            if value.result_at is None:
                tool.value = replace(
                    value,
                    result_at=event.ts,
                    status=event.status,
                    duration_ms=event.duration_ms,
                    size=event.size,
                    content=event.content if content else None,
                )
                ended.append(("tool", event.call_id))
        case QuestionAsked():
            message = event.message if content else None
            asked = QuestionTimeline(
                question_id=event.question_id,
                mode=event.mode,
                revision=event.revision,
                asked_at=event.ts,
                message=message,
            )
            tool.questions.append(asked)
        case QuestionAnswered():
            for n, q in enumerate(tool.questions):
                if q.question_id == event.question_id and q.answered_at is None:
                    answer = event.content if content else None
                    tool.questions[n] = replace(
                        q, answered_at=event.ts, action=event.action, by=event.by, content=answer
                    )
        case _:
            assert_never(event)
