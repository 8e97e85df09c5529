"""Turn metrics of an attempt that ends, and the final status it is persisted with.

Guarantees:
- ``turn_metrics`` carries the usage the provider reported, step by step, wherever it arrived (a step that
  finished: its final usage; a stopped or failed step: the prompt side reported before the end, e.g. Anthropic's
  ``message_start``); only what was never reported is counted locally, and ``input_estimated`` /
  ``output_estimated`` say which (``estimated``: either). A last step whose request the provider refused (an HTTP
  error status before any output or usage: ``#toolong``, a 400, a 429 given up on) counts no tokens: it was not
  charged. Wait and output durations come from the engine's clock.
- ``final_status`` is the status the reducer derived for an ended attempt; asking it of one still live is a bug and
  raises ``AssertionError``.
"""

from __future__ import annotations

from typing import cast

from engine.provider import count_messages, count_text
from engine.stamps import now_iso
from engine.turns.attempt import AttemptRun, Broken
from ledger.events import FinalStatus, TurnMetrics, Usage
from ledger.state import TERMINAL_STATUSES, AttemptStatus


def turn_metrics(active: AttemptRun, now_mono: float) -> TurnMetrics:
    """Wait and output durations from the engine's clock; tokens as the provider reported them, step by step,
    and counted locally only for what it never reported (``input_estimated`` / ``output_estimated`` say which)."""
    first, last = active.first_chunk_mono, active.last_chunk_mono
    wait = (first - active.sent_mono) * 1000 if first and active.sent_mono else None
    output = ((last or now_mono) - first) * 1000 if first else None
    inputs = active.step_inputs or [active.messages]
    reports: list[Usage | None] = [*active.step_usage, active.step_reported][: len(inputs)]
    reports += [None] * (len(inputs) - len(reports))
    text, starts = active.output_text, [*(active.step_starts or [0]), active.delivered_chars]
    total = Usage()
    input_estimated = output_estimated = False
    refused = _refused(active)
    for number, (messages, report) in enumerate(zip(inputs, reports, strict=True)):
        if refused and number == len(inputs) - 1:
            continue  # the provider answered this step's request with an error, before any output: not charged
        reported = report is not None and not report.estimated
        if report is None or not reported:
            input_tokens, input_estimated = count_messages(active.model, messages), True
            report = Usage()
        else:
            input_tokens = report.input_tokens
        if report.partial or not reported:
            step_text = text[starts[number] : starts[number + 1]] if number + 1 < len(starts) else ""
            output_tokens, reasoning, output_estimated = count_text(active.model, step_text), 0, True
        else:
            output_tokens, reasoning = report.output_tokens, report.reasoning_tokens
        total = Usage(
            input_tokens=total.input_tokens + input_tokens,
            output_tokens=total.output_tokens + output_tokens,
            cached_tokens=total.cached_tokens + report.cached_tokens,
            cache_write_tokens=total.cache_write_tokens + report.cache_write_tokens,
            reasoning_tokens=total.reasoning_tokens + reasoning,
        )
    return TurnMetrics(
        sent_at=active.sent_at,
        wait_ms=_round(wait),
        output_ms=_round(output),
        completed_at=now_iso(),
        input_tokens=total.input_tokens,
        output_tokens=total.output_tokens,
        cached_tokens=total.cached_tokens,
        estimated=input_estimated or output_estimated,
        steps=max(active.step, 1),
        tool_ms=round(active.tool_seconds * 1000, 1) if active.tool_seconds else None,
        reasoning_tokens=total.reasoning_tokens,
        cache_write_tokens=total.cache_write_tokens,
        input_estimated=input_estimated,
        output_estimated=output_estimated,
    )


def _refused(active: AttemptRun) -> bool:
    """The last step's request was refused: the provider's own error (an HTTP status with the body it sent: a
    status litellm made up after a 200 has none), no chunk, no usage reported."""
    outcome = active.outcome
    return (
        isinstance(outcome, Broken)
        and outcome.failure.http_status is not None
        and outcome.failure.body is not None
        and active.step_chunks == 0
        and active.step_reported is None
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
