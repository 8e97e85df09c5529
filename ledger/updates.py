"""Small pure helpers the reducers share: change one attempt, one live attempt, one tool call.

Guarantees: each returns a new ``ConversationState`` (never mutates); changes to a missing attempt are ignored
(``orphan`` counts it); a terminal attempt is never changed by ``update_live`` or ``update_call``; an answered
tool call is never changed by ``update_call``.
"""

from __future__ import annotations

from collections.abc import Callable

from ledger.state import TERMINAL_STATUSES, AttemptState, ConversationState, ToolCallState

Change = Callable[[AttemptState], AttemptState]


def update_attempt(conv: ConversationState, attempt_id: str, change: Change, orphan: bool = False) -> ConversationState:
    attempt = conv.attempts.get(attempt_id)
    if attempt is None:
        return conv._replace(orphan_chunks=conv.orphan_chunks + 1) if orphan else conv
    return conv._replace(attempts=conv.attempts.set(attempt_id, change(attempt)))


def update_live(conv: ConversationState, attempt_id: str, change: Change) -> ConversationState:
    attempt = conv.attempts.get(attempt_id)
    if attempt is None or attempt.status in TERMINAL_STATUSES:
        return conv
    return conv._replace(attempts=conv.attempts.set(attempt_id, change(attempt)))


def with_call(conv: ConversationState, attempt: AttemptState, call: ToolCallState) -> ConversationState:
    attempt = attempt._replace(tool_calls={**attempt.tool_calls, call.call_id: call})
    return conv._replace(attempts=conv.attempts.set(attempt.attempt_id, attempt))


def update_call(
    conv: ConversationState, attempt_id: str, call_id: str, change: Callable[[ToolCallState], ToolCallState]
) -> ConversationState:
    attempt = conv.attempts.get(attempt_id)
    if attempt is None or attempt.status in TERMINAL_STATUSES:
        return conv
    call = attempt.tool_calls.get(call_id)
    if call is None or call.answered:
        return conv
    return with_call(conv, attempt, change(call))
