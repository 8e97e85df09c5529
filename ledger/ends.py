"""The one-end rule, written once: where an attempt's run is (``Phase``) and what one more event of it does.

Guarantees: pure (no clock, no I/O, no state of its own).
- ``ATTEMPT_KINDS`` are the kinds that belong to one attempt's run (each carries ``attempt_id``); every other
  kind (the conversation's, the message tree's, ``retrying``, ``detached``/``attached``) is not subject to it.
- An attempt has exactly one end: ``done``, ``cancelled``, ``recovered`` or ``failed`` without ``will_retry``
  (``is_terminal``), then one ``persisted``. ``next_phase`` walks ``none`` -> ``open`` (``started``) ->
  ``ended`` (its first terminal) -> ``persisted`` (its first ``persisted``; a ``persisted`` of an open attempt
  ends it too, as ledgers written before the rule may have it).
- ``phase_of`` reads the phase off a replayed ``AttemptState``; ``is_late`` says whether one more event of a
  conversation is late. ``next_phase`` returns ``None`` for a late event: any event of the attempt after its end
  (a second terminal, ``request_sent``, a step, a tool call or a ``tool_result`` once it ended; anything after
  ``persisted``). A late event is recorded (the ledger is append-only) and counted, and never applied: it changes
  no state, no text, no tool result and no model history. Chunks and stale results stay what the stale rule makes
  them (stale, counted as today: chunks received = rendered + stale), so they are never late.
"""

from __future__ import annotations

from typing import Literal

from ledger.events import ATTEMPT_KINDS as ATTEMPT_KINDS_OF_FLAGS
from ledger.events import AnyEvent, Cancelled, Done, Failed, Persisted, Recovered, Started
from ledger.state import TERMINAL_STATUSES, AttemptState, ConversationState

Phase = Literal["none", "open", "ended", "persisted"]

ATTEMPT_KINDS: frozenset[str] = ATTEMPT_KINDS_OF_FLAGS  # the kinds whose ``FLAGS`` say ``attempt``

#: Kinds the stale rule already keeps from changing an ended attempt: counted as stale, never late.
STALE_KINDS: frozenset[str] = frozenset({"chunk", "stale_chunk", "stale_tool_result"})

#: The content of the ``unknown`` tool result a sweep (or a restart) records for a call that was running.
UNKNOWN_OUTCOME = (
    "Unknown: the instance running this tool stopped answering; whether it finished, and what it returned, "
    "is not known."
)


def phase_of(attempt: AttemptState | None) -> Phase:
    """Where a replayed attempt is: ``none`` (not started), ``open``, ``ended`` (terminal) or ``persisted``."""
    if attempt is None:
        return "none"
    if attempt.persisted:
        return "persisted"
    return "ended" if attempt.status in TERMINAL_STATUSES else "open"


def is_late(conv: ConversationState, event: AnyEvent) -> bool:
    """Whether ``event`` is late for its attempt in ``conv``: recorded, counted, never applied."""
    if event.KIND not in ATTEMPT_KINDS:
        return False
    attempt_id = getattr(event, "attempt_id", None)
    attempt = conv.attempts.get(attempt_id) if isinstance(attempt_id, str) else None
    return attempt is not None and next_phase(phase_of(attempt), event) is None


def is_terminal(event: AnyEvent) -> bool:
    """Whether ``event`` ends its attempt: done, cancelled, recovered, or failed without an automatic re-send."""
    match event:
        case Done() | Cancelled() | Recovered():
            return True
        case Failed():
            return not event.will_retry
        case _:
            return False


def next_phase(phase: Phase, event: AnyEvent) -> Phase | None:
    """The attempt's phase after ``event`` (one of ``ATTEMPT_KINDS``), or ``None``: the event is late (recorded,
    never applied). Kinds outside ``ATTEMPT_KINDS`` leave the phase as it is."""
    kind = event.KIND
    if kind not in ATTEMPT_KINDS:
        return phase
    if phase == "none":
        return "open" if isinstance(event, Started) else "none"  # nothing of an attempt that never started applies
    if phase == "open":
        if isinstance(event, Persisted):
            return "persisted"
        return "ended" if is_terminal(event) else "open"
    if kind in STALE_KINDS:
        return phase
    if phase == "ended" and isinstance(event, Persisted):
        return "persisted"
    return None
