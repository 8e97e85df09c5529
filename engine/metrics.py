"""Turn metrics of an attempt that ends, and the final status it is persisted with.

Guarantees:
- ``turn_metrics`` carries the provider's usage when it sent one; otherwise tokens are counted locally and flagged
  ``estimated`` (always the case for a cancelled stream). Wait and output durations come from the engine's clock.
- ``final_status`` is the status the reducer derived for an ended attempt; asking it of one still live is a bug and
  raises ``AssertionError``.
"""

from __future__ import annotations

from typing import cast

from engine.attempt import AttemptRun
from engine.stamps import now_iso
from engine.tokens import count_messages, count_text
from ledger.events import FinalStatus, TurnMetrics, Usage
from ledger.state import TERMINAL_STATUSES, AttemptStatus


def turn_metrics(active: AttemptRun, usage: Usage | None, now_mono: float) -> TurnMetrics:
    """Wait and output durations from the engine's clock; tokens reported by the provider, else estimated."""
    first, last = active.first_chunk_mono, active.last_chunk_mono
    wait = (first - active.sent_mono) * 1000 if first and active.sent_mono else None
    output = ((last or now_mono) - first) * 1000 if first else None
    if usage is None or usage.estimated:
        inputs = active.step_inputs or [active.messages]
        usage = Usage(
            input_tokens=sum(count_messages(active.model, messages) for messages in inputs),
            output_tokens=count_text(active.model, active.output_text),
            estimated=True,
        )
    return TurnMetrics(
        sent_at=active.sent_at,
        wait_ms=_round(wait),
        output_ms=_round(output),
        completed_at=now_iso(),
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cached_tokens=usage.cached_tokens,
        estimated=usage.estimated,
        steps=max(active.step, 1),
        tool_ms=round(active.tool_seconds * 1000, 1) if active.tool_seconds else None,
    )


def recovered_metrics(model: str, text: str) -> TurnMetrics:
    """What is known of a turn a dead process left: when it was closed and the tokens of its persisted prefix."""
    return TurnMetrics(completed_at=now_iso(), output_tokens=count_text(model, text), estimated=True)


def final_status(status: AttemptStatus) -> FinalStatus:
    """The status a finalized attempt has; finalizing one still live would be a bug, so it is refused loudly."""
    if status not in TERMINAL_STATUSES:
        raise AssertionError(f"finalizing an attempt that is still {status}")
    return cast(FinalStatus, status)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)
