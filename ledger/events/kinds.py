"""The run-time lists of kinds, each made from the flags every event class declares next to its ``KIND``.

Guarantees: pure (imports only the events). Adding a kind means declaring its ``FLAGS`` in its event module: every
list below follows, and ``tests/ledger/test_kinds.py`` fails for a class without them.
"""

from __future__ import annotations

from ledger.events.core import EVENT_CLASSES, Event, Flags

__all__ = ["ATTEMPT_KINDS", "LATE_PHASE_KINDS", "LISTED_KINDS", "PROMPT_KINDS", "URGENT_KINDS", "flagged"]


def flagged(flag: str, classes: tuple[type[Event], ...] = EVENT_CLASSES) -> frozenset[str]:
    """The kinds whose ``FLAGS`` say ``flag`` (a field of ``Flags``)."""
    assert flag in Flags.__dataclass_fields__, flag
    return frozenset(cls.KIND for cls in classes if getattr(cls.FLAGS, flag))


#: Kinds that belong to one attempt's run (each carries ``attempt_id``).
ATTEMPT_KINDS = flagged("attempt")
#: Kinds the store writes at once (a ``failed`` that ends its attempt too: ``store.api.is_urgent``).
URGENT_KINDS = flagged("urgent")
#: Kinds a page renders on the loop's next turn.
PROMPT_KINDS = flagged("prompt")
#: Kinds that change the conversation list.
LISTED_KINDS = flagged("listed")
#: Kinds that, late, show as a phase of their own kind in the audit's timeline.
LATE_PHASE_KINDS = flagged("late_phase")
