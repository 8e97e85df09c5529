"""The reducers of agent-turn events: steps, tool calls and their one result each.

Guarantees: pure; a step is added once (in order); a tool call is created when its first piece is recorded or when
it is complete, placed in its step once; a result is taken only when ``ledger.stale.tool_result_stale_reason``
allows it (otherwise it counts as stale), so a call keeps its first result.
"""

from __future__ import annotations

from ledger.events import StepFinished, StepStarted, ToolCalled, ToolCallStarted, ToolResult
from ledger.stale import stale_reason, tool_result_stale_reason
from ledger.state import AttemptState, ConversationState, StepState, ToolCallState
from ledger.updates import update_attempt, with_call


def step_started(attempt: AttemptState, event: StepStarted) -> AttemptState:
    if attempt.steps and attempt.steps[-1].number >= event.step:
        return attempt
    step = StepState(
        number=event.step,
        text_start=attempt.text_pieces.length,
        reasoning_start=attempt.reasoning_pieces.length,
    )
    return attempt._replace(steps=(*attempt.steps, step))


def step_finished(attempt: AttemptState, event: StepFinished) -> AttemptState:
    steps = tuple(
        s._replace(finished=True, finish_reason=event.finish_reason, usage=event.usage) if s.number == event.step else s
        for s in attempt.steps
    )
    return attempt._replace(steps=steps)


def tool_call_started(conv: ConversationState, event: ToolCallStarted) -> ConversationState:
    if stale_reason(conv, event.attempt_id) is not None:
        return conv
    attempt = conv.attempts[event.attempt_id]
    if event.call_id in attempt.tool_calls:
        return conv
    call = ToolCallState(call_id=event.call_id, name=event.name, step=event.step, position=event.index)
    return with_call(conv, in_step(attempt, event.step, event.call_id), call)


def tool_called(attempt: AttemptState, event: ToolCalled) -> AttemptState:
    old = attempt.tool_calls.get(event.call_id)
    if old is not None and old.phase != "streaming":
        return attempt
    call = ToolCallState(
        call_id=event.call_id,
        name=event.name,
        step=event.step,
        position=old.position if old else len(attempt.tool_calls),
        arguments=event.arguments,
        server=event.server,
        phase="ready",
    )
    attempt = in_step(attempt, event.step, event.call_id)
    return attempt._replace(tool_calls={**attempt.tool_calls, call.call_id: call})


def tool_result(conv: ConversationState, event: ToolResult) -> ConversationState:
    if tool_result_stale_reason(conv, event.attempt_id, event.call_id) is not None:
        return update_attempt(conv, event.attempt_id, lambda a: a._replace(stale_tool_results=a.stale_tool_results + 1))
    attempt = conv.attempts[event.attempt_id]
    call = attempt.tool_calls[event.call_id]._replace(
        status=event.status,
        content=event.content,
        size=event.size,
        duration_ms=event.duration_ms,
        parts=event.parts,
        structured=event.structured,
        whole=event.whole,
    )
    return with_call(conv, attempt, call)


def in_step(attempt: AttemptState, step: int, call_id: str) -> AttemptState:
    """The attempt with ``call_id`` listed in its step ``step`` (added once)."""
    steps = attempt.steps or (StepState(number=1),)
    steps = tuple(
        s._replace(call_ids=(*s.call_ids, call_id)) if s.number == step and call_id not in s.call_ids else s
        for s in steps
    )
    return attempt._replace(steps=steps)
