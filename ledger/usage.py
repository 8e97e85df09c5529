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
  row there: it was paid for once, where it ran, and counts there (or nowhere once that chat is deleted).
- Rows come in the order the attempts started (``ts``, then id): the same order for equal states.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, NamedTuple

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
    """Every attempt of the conversation as a row, in the order they started."""
    rows = (row_of(conv, a) for a in conv.attempts.values() if not copied(conv, a))
    return tuple(sorted(rows, key=lambda r: (r.ts, r.attempt_id)))


def since(rows: Iterable[UsageRow], start: str) -> list[UsageRow]:
    """The rows of attempts started at ``start`` (an ISO 8601 UTC time) or later."""
    return [r for r in rows if r.ts >= start]
