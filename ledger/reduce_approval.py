"""The reducer of the approval kinds (``ledger.events.approval``): pure; see that module's guarantees.

Guarantees: the first answer of a call is the one applied; a chat grant is kept only from a person's ``run`` with
scope ``chat``; a revoked chat grant is gone from ``ConversationState.grants``; an answered call never changes.
"""

from __future__ import annotations

from ledger.events import ApprovalAsked, ApprovalEvent, ApprovalGiven, GrantRevoked
from ledger.state import ConversationState, ToolCallState
from ledger.updates import update_call


def grant_key(server: str, tool: str) -> str:
    return f"{server}/{tool}"


def apply_approval(conv: ConversationState, event: ApprovalEvent) -> ConversationState:
    """The reducer of the approval kinds (see the module's guarantees)."""
    if isinstance(event, GrantRevoked):
        if event.scope != "chat":
            return conv
        grants = {k: v for k, v in conv.grants.items() if k != grant_key(event.server, event.tool)}
        return conv._replace(grants=grants)
    if isinstance(event, ApprovalAsked):
        return update_call(conv, event.attempt_id, event.call_id, lambda c: _asked(c, event))
    attempt = conv.attempts.get(event.attempt_id)
    call = attempt.tool_calls.get(event.call_id) if attempt is not None else None
    if call is None or call.answered or call.approval is not None:
        return conv
    conv = update_call(conv, event.attempt_id, event.call_id, lambda c: _given(c, event))
    if event.decision == "run" and event.scope == "chat" and event.by == "user":
        conv = conv._replace(grants={**conv.grants, grant_key(event.server, event.tool): event.grant_hash})
    return conv


def _asked(call: ToolCallState, event: ApprovalAsked) -> ToolCallState:
    if call.approval is not None or call.asked is not None:
        return call
    return call._replace(phase="waiting", asked=event)


def _given(call: ToolCallState, event: ApprovalGiven) -> ToolCallState:
    return call._replace(phase="ready" if event.decision == "run" else call.phase, approval=event)
