"""What each attempt of a conversation used, as rows: the ledger's side of spend limits and the usage page.

A row is the facts of one attempt (whose chat, when it started, which model, what for, how it ended, the tokens):
no price (a price is a reading of a price table: ``engine.spend`` prices rows with ``engine.provider.cost``).

Guarantees:
- Pure: every row is made from a ``ConversationState`` alone, so the rows of a conversation are those of
  ``replay`` of its events; nothing is counted twice and no counter is kept beside the ledger.
- Every attempt is a row, whatever its purpose (answers, titles, compactions, continuations) or end: ``complete``,
  ``stopped`` (interrupted or empty: the person or something else cancelled it; its partial tokens count),
  ``failed`` (its re-sent requests included: the attempt's tokens are all its requests'), or ``running``.
- An ended attempt's tokens are its ``persisted`` metrics (``TurnMetrics``: the provider's counts, or counted
  locally and marked ``estimated``); a running one's are the usage of the steps it finished so far (an agent turn
  between steps, which is where a spend limit is checked), estimated when any of them is.
- An attempt a branch copied into a new chat (``branched_from``; it started before that chat was created) is not a
  row there: it was paid for once, where it ran, and counts there (also once that chat is deleted).
- A deleted conversation's rows are those its ``deleted`` event kept (``usage_of`` of the conversation as it stood,
  ``Deleted.usage``; ``ConversationState.spent`` after it), marked ``deleted``: equal, but for that mark, to the
  rows of the conversation just before its deletion. A ``deleted`` older than that field kept none.
- Rows come in the order the attempts started (``ts``, then id): the same order for equal states.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, NamedTuple

from ledger.events import AttemptUsage, Deleted
from ledger.state import AttemptState, ConversationState

UsageStatus = Literal["complete", "stopped", "failed", "running"]
STATUSES: tuple[UsageStatus, ...] = ("complete", "stopped", "failed", "running")


class UsageRow(NamedTuple):
    """One attempt's use of a model."""

    conversation_id: str
    attempt_id: str
    owner: str | None  # the conversation's owner (None: personal mode's one person)
    ts: str  # when the attempt started (ISO 8601 UTC): the day and month it counts in
    model: str
    purpose: str  # answer, title or compaction
    status: UsageStatus
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    estimated: bool = False  # some count was made locally (a stopped stream, a provider that sent none)
    deleted: bool = False  # its chat was deleted (the row is what the ``deleted`` event kept)

    @property
    def tokens(self) -> int:
        """The tokens a token limit counts: sent and received."""
        return self.input_tokens + self.output_tokens

    @property
    def day(self) -> str:
        return self.ts[:10]


def status_of(attempt: AttemptState) -> UsageStatus:
    if attempt.status == "complete":
        return "complete"
    if attempt.status == "failed":
        return "failed"
    if attempt.status in ("interrupted", "empty"):
        return "stopped"
    return "running"


def row_of(conv: ConversationState, attempt: AttemptState) -> UsageRow:
    """The row of one attempt of ``conv`` (see the module's guarantees)."""
    head = (conv.conversation_id, attempt.attempt_id, conv.owner, attempt.started_ts, attempt.model, attempt.purpose)
    status = status_of(attempt)
    metrics = attempt.metrics
    if metrics is not None:
        return UsageRow(
            *head, status, metrics.input_tokens, metrics.output_tokens, metrics.cached_tokens,
            metrics.cache_write_tokens, metrics.reasoning_tokens, metrics.input_is_estimated or
            metrics.output_is_estimated,
        )  # fmt: skip
    steps = [s.usage for s in attempt.steps if s.finished and s.usage is not None]
    return UsageRow(
        *head, status, sum(u.input_tokens for u in steps), sum(u.output_tokens for u in steps),
        sum(u.cached_tokens for u in steps), sum(u.cache_write_tokens for u in steps),
        sum(u.reasoning_tokens for u in steps), any(u.estimated for u in steps),
    )  # fmt: skip


def copied(conv: ConversationState, attempt: AttemptState) -> bool:
    """Whether a branch copied ``attempt`` into ``conv`` (``engine.commands.branching`` keeps its start time)."""
    return conv.branched_from is not None and attempt.started_ts < conv.created_ts


def usage_rows(conv: ConversationState) -> tuple[UsageRow, ...]:
    """Every attempt of the conversation as a row, in the order they started (a deleted one's: those it kept)."""
    if conv.deleted:
        return kept_rows(conv.conversation_id, conv.owner, conv.spent)
    rows = (row_of(conv, a) for a in conv.attempts.values() if not copied(conv, a))
    return tuple(sorted(rows, key=lambda r: (r.ts, r.attempt_id)))


def usage_of(conv: ConversationState) -> tuple[AttemptUsage, ...]:
    """What a ``deleted`` event keeps of the conversation: its rows without the chat and owner (the event's)."""
    return tuple(AttemptUsage(
        attempt_id=r.attempt_id, ts=r.ts, model=r.model, purpose=r.purpose, status=r.status,
        input_tokens=r.input_tokens, output_tokens=r.output_tokens, cached_tokens=r.cached_tokens,
        cache_write_tokens=r.cache_write_tokens, reasoning_tokens=r.reasoning_tokens, estimated=r.estimated,
    ) for r in usage_rows(conv))  # fmt: skip


def kept_rows(cid: str, owner: str | None, kept: tuple[AttemptUsage, ...]) -> tuple[UsageRow, ...]:
    """The rows a ``deleted`` event kept (``usage_of``), marked ``deleted``."""
    return tuple(UsageRow(
        cid, u.attempt_id, owner, u.ts, u.model, u.purpose, as_status(u.status), u.input_tokens, u.output_tokens,
        u.cached_tokens, u.cache_write_tokens, u.reasoning_tokens, u.estimated, deleted=True,
    ) for u in kept)  # fmt: skip


def buried_rows(event: Deleted) -> tuple[UsageRow, ...]:
    """The rows of a conversation from its ``deleted`` event alone (what a store keeps with the tombstone)."""
    return kept_rows(event.conversation_id, event.owner, event.usage)


def as_status(status: str) -> UsageStatus:
    return next((s for s in STATUSES if s == status), "running")  # a status a newer version wrote: still counted


def since(rows: Iterable[UsageRow], start: str) -> list[UsageRow]:
    """The rows of attempts started at ``start`` (an ISO 8601 UTC time) or later."""
    return [r for r in rows if r.ts >= start]
