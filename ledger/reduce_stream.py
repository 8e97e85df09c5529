"""The reducers of an attempt's stream: its chunks under the stale rule, and how it ends (closed or failed).

Guarantees: pure. A chunk is rendered only when ``ledger.stale.stale_reason`` allows it, else counted as stale
(chunks_received == chunks_rendered + stale_chunks); rendered text is appended as a piece (``ledger.pieces``), so a
chunk costs its own length. A closed attempt is ``interrupted`` only when it has something to keep and its cancel
source keeps the delivered prefix (``PARTIAL_KEEPING_SOURCES``), otherwise ``empty``. A failure that will be
re-sent leaves the attempt streaming, its summary kept as ``resend_note`` until the re-sent request is recorded
(``request_sent`` clears it); terminal attempts are never changed (``ledger.updates.update_live``).
"""

from __future__ import annotations

from ledger.events import PARTIAL_KEEPING_SOURCES, Chunk, Failed
from ledger.stale import stale_reason
from ledger.state import AttemptState, AttemptStatus, ConversationState
from ledger.updates import update_live


def chunk(conv: ConversationState, event: Chunk) -> ConversationState:
    """The conversation with one more chunk, its ``last_seq`` and ``updated_ts`` stamped (the reducer's hot path)."""
    attempt = conv.attempts.get(event.attempt_id)
    if attempt is None:
        return conv._replace(orphan_chunks=conv.orphan_chunks + 1)
    if stale_reason(conv, attempt.attempt_id, event.chunk_seq) is not None:
        new = attempt._replace(chunks_received=attempt.chunks_received + 1, stale_chunks=attempt.stale_chunks + 1)
    elif event.block == "reasoning":
        new = attempt._replace(
            reasoning_pieces=attempt.reasoning_pieces.plus(event.text),
            chunks_received=attempt.chunks_received + 1,
            chunks_rendered=attempt.chunks_rendered + 1,
            last_chunk_seq=event.chunk_seq,
        )
    else:
        new = attempt._replace(
            text_pieces=attempt.text_pieces.plus(event.text),
            chunks_received=attempt.chunks_received + 1,
            chunks_rendered=attempt.chunks_rendered + 1,
            last_chunk_seq=event.chunk_seq,
        )
    return conv._replace(
        attempts=conv.attempts.set(attempt.attempt_id, new),
        last_seq=max(conv.last_seq, event.seq),
        updated_ts=event.ts or conv.updated_ts,
    )


def closed(attempt: AttemptState, source: str, keep_partial: bool) -> AttemptState:
    """The attempt ended by a cancel (``source``) or a restart: interrupted with its prefix, or empty."""
    has_text = bool(attempt.text_pieces or attempt.reasoning_pieces) or any(
        c.answered for c in attempt.tool_calls.values()
    )
    keeps = keep_partial and source in PARTIAL_KEEPING_SOURCES
    status: AttemptStatus = "interrupted" if has_text and keeps else "empty"
    return attempt._replace(status=status, cancel_source=source, keep_partial=keeps)


def failed(conv: ConversationState, event: Failed) -> ConversationState:
    if event.will_retry:  # not an end: the attempt waits for its automatic re-send, saying why
        return update_live(conv, event.attempt_id, lambda a: a._replace(resend_note=event.summary))
    return update_live(
        conv,
        event.attempt_id,
        lambda a: a._replace(
            status="failed", error_type=event.error_type, error_summary=event.summary, http_status=event.http_status
        ),
    )
