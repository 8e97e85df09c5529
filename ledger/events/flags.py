"""What an event kind means to the parts of the app that react to kinds, declared by each event class.

Guarantees: a frozen value with no defaults, so a kind states every flag; pure, imports nothing of the app.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Flags"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Flags:
    """What an event kind means to the parts that react to kinds: each event class declares its own next to its
    ``KIND``, and every run-time list of kinds is made from them (``ledger.events.kinds``), none written by hand."""

    attempt: bool  # it belongs to one attempt's run: the one-end rule (``ledger.ends``), the cluster's fencing
    urgent: bool  # the store writes it at once, not within its flush interval (``failed``: when it ends an attempt)
    prompt: bool  # a page renders it on the loop's next turn: it starts or ends something (``ui.refresh``)
    listed: bool  # it changes what the conversation list shows
    late_phase: bool  # recorded after its attempt's end, the audit's timeline shows it as a phase of its kind
