"""The stale rule, written once: whether a chunk for an attempt may be rendered, and if not, why.

Guarantees: pure (no clock, no I/O). A chunk is rendered only when its attempt exists, is the current attempt of its
message, is still streaming (not closing, not closed) and the chunk comes after the last rendered one. The reducer
applies it to every recorded chunk; the engine's chunk gate applies it before recording, so a chunk the gate renders
is rendered again by any replay. ``tool_result_stale_reason`` is the same rule for tool results. ``run_stale_reason``
is the part of the rule an attempt's own run decides (streaming, closing, closed, order): ``stale_reason`` asks it
once the attempt exists and is current, and the per-attempt timeline (``ledger.folds.timeline``) asks it for every
chunk it folds.
"""

from __future__ import annotations

from ledger.events import StaleWhy
from ledger.state import LIVE_STATUSES, ConversationState


def stale_reason(conv: ConversationState, attempt_id: str, chunk_seq: int | None = None) -> StaleWhy | None:
    """``None`` when a chunk of ``attempt_id`` (numbered ``chunk_seq``) is rendered; else why it is stale."""
    attempt = conv.attempts.get(attempt_id)
    if attempt is None:
        return "closed"
    message = conv.messages.get(attempt.message_id)
    if message is None or message.current_attempt_id != attempt_id:
        return "superseded"
    return run_stale_reason(attempt.status, attempt.last_chunk_seq, chunk_seq)


def run_stale_reason(status: str, last_chunk_seq: int | None = None, chunk_seq: int | None = None) -> StaleWhy | None:
    """``None`` when a chunk numbered ``chunk_seq`` is rendered by an attempt in ``status`` that rendered up to
    ``last_chunk_seq``; else why it is stale: ``closing`` once a cancel was asked (still live), ``closed`` once it
    ended, ``out_of_order`` at or below the last rendered one (not judged when either number is ``None``)."""
    if status != "streaming":
        return "closing" if status in LIVE_STATUSES else "closed"
    if chunk_seq is not None and last_chunk_seq is not None and chunk_seq <= last_chunk_seq:
        return "out_of_order"
    return None


def tool_result_stale_reason(conv: ConversationState, attempt_id: str, call_id: str) -> StaleWhy | None:
    """``None`` when a result for ``call_id`` is recorded as the call's one result; else why it is stale.

    Unlike a chunk, a result is still taken while the attempt is closing: a Stop gives in-flight calls their real
    outcome. Once the attempt has ended, was superseded, or the call already has its result, it is stale."""
    attempt = conv.attempts.get(attempt_id)
    if attempt is None or call_id not in attempt.tool_calls:
        return "closed"
    message = conv.messages.get(attempt.message_id)
    if message is None or message.current_attempt_id != attempt_id:
        return "superseded"
    if not attempt.is_live:
        return "closed"
    if attempt.tool_calls[call_id].answered:
        return "out_of_order"
    return None
