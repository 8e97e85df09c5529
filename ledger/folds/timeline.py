"""One timeline per attempt, folded once from a conversation's events: the audit, the trace and the waterfall are
projections of it (``ledger.folds.audit``, ``ledger.folds.trace``, ``ledger.folds.waterfall``), each only mapping it
to its values.

Guarantees:
- Pure; one ``TimelineFold`` per ``started`` (a second ``started`` of the same attempt is one of its moments), fed
  every later event that names the attempt (a user's ``retrying`` names the attempt it replaces, and goes there);
  the user message it answers (``submitted``) is handed to it once, when it starts.
- The rules are stated once, elsewhere: the stale rule in ``ledger.stale``, the one-end rule in ``ledger.ends``;
  what the fold keeps of them is in ``ledger.folds.timeline_fold`` (the values in ``ledger.folds.timeline_values``).
- Live or back-filled, the same events give the same timelines: ``Timelines.add`` is the back-fill's step.
"""

from __future__ import annotations

from collections.abc import Iterable

# ``X as X`` re-exports each name (PEP 484); the import sorter would split them into one statement each.
# isort: off
from ledger.folds.timeline_values import (
    AttemptTimeline as AttemptTimeline,
    Moment as Moment,
    QuestionTimeline as QuestionTimeline,
    RequestTimeline as RequestTimeline,
    ToolTimeline as ToolTimeline,
)

# isort: on
from ledger.events import AnyEvent, Chunk, Retrying, Started, Submitted
from ledger.folds.timeline_fold import TimelineFold


class Timelines:
    """The attempts of events folded as they land. ``content``: keep texts; ``arrivals``: keep each chunk's arrival
    (the waterfall's replay)."""

    def __init__(self, content: bool = False, arrivals: bool = False) -> None:
        self.content, self.arrivals = content, arrivals
        self.folds: dict[str, TimelineFold] = {}
        self._submitted: dict[str, Submitted] = {}

    def add(self, event: AnyEvent) -> tuple[TimelineFold, bool] | None:
        """The fold ``event`` went to, and whether it was that attempt's first ``persisted``; ``None`` for a chunk
        (counted: the hot path) and for an event of no folded attempt."""
        if type(event) is Chunk:  # the hot path: one dict lookup and a few counters
            if (fold := self.folds.get(event.attempt_id)) is not None:
                fold.add(event)
            return None
        if isinstance(event, Submitted):
            self._submitted[event.message_id] = event
            return None
        if isinstance(event, Started) and event.attempt_id not in self.folds:
            submitted = self._submitted.pop(event.user_message_id, None)
            self.folds[event.attempt_id] = TimelineFold(event, submitted, self.content, self.arrivals)
            return None
        attempt_id = getattr(event, "attempt_id", None)
        if isinstance(event, Retrying) and event.why == "user":
            attempt_id = event.previous_attempt_id
        fold = self.folds.get(attempt_id) if isinstance(attempt_id, str) else None
        if fold is None:
            return None
        return fold, fold.add(event)

    def drop(self, attempt_id: str) -> None:
        """Forget an attempt (the live trace, once it sent its whole trace): its later events go nowhere."""
        self.folds.pop(attempt_id, None)


def timelines(events: Iterable[AnyEvent], content: bool = False, arrivals: bool = False) -> list[AttemptTimeline]:
    """The timeline of every attempt of these events (one conversation's, in seq order), in the order they started."""
    folder = Timelines(content, arrivals)
    for event in events:
        folder.add(event)
    return [fold.freeze() for fold in folder.folds.values()]
