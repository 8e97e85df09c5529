"""One step's model call: requests, automatic re-sends before the step's first chunk, timeouts, closing.

Guarantees:
- Every HTTP stream is closed in a ``finally`` (``aclose``), whether the answer completed, failed, timed out or
  the task was cancelled; when it was closed early, ``upstream_closed`` records the milliseconds since the
  cancel (or timeout) was decided.
- A retryable failure before the step's first chunk is re-sent (new request_id, same attempt) after a backoff, at
  most ``max_resends`` times; after the step delivered anything nothing is ever re-sent.
- A first-chunk or idle timeout goes through the same path as a cancel (``cancel_requested`` with source
  ``timeout``, stream closed) and ends the attempt as failed with error_type ``timeout``. The idle deadline is
  one timer for the whole stream, moved at most once per ``IDLE_SLACK`` (not a timer per chunk).
- A stream whose chunks are already buffered (the read never suspends) gives the event loop back every
  ``TURN_SECONDS``, so pages and other streams are never starved by a fast provider.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from engine.attempt import AttemptRun, Broken, Completed, Outcome
from engine.failures import StreamStalled, classify
from engine.provider import ProviderStream, ToolPiece, open_stream
from engine.settings import EngineSettings
from engine.stamps import new_id, now_iso
from ledger.events import CancelRequested, Failed, RequestSent, Retrying, UpstreamClosed

IDLE_SLACK = 0.25  # seconds: the idle timeout fires after idle_timeout to idle_timeout + IDLE_SLACK of silence
TURN_SECONDS = 0.005  # the longest the stream keeps the event loop when chunks arrive faster than it reads


async def stream_step(run: AttemptRun, settings: EngineSettings, tools: list[dict[str, Any]]) -> Outcome:
    """Run the step's requests until one streams to its end, fails for good, or the task is cancelled."""
    limits = settings.limits
    request_id = new_id("req")
    for resend in range(limits.max_resends + 1):
        run.request_id = request_id
        run.append(
            RequestSent(
                conversation_id=run.conversation_id,
                attempt_id=run.attempt_id,
                request_id=request_id,
                model=run.provider.model,
                params=run.provider.public_params(),
                context_message_ids=run.context_ids,
            )
        )
        if run.first_chunk_mono is None:  # the time to first chunk is the first step's (of its last re-send)
            run.sent_at, run.sent_mono = run.sent_at or now_iso(), time.monotonic()
        try:
            return await _one_request(run, settings, tools)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - every provider error is classified, none escapes
            failure = classify(exc)
            if isinstance(exc, StreamStalled | TimeoutError):
                return Broken(failure, request_id)
            if not (failure.retryable and run.step_chunks == 0 and resend < limits.max_resends):
                return Broken(failure, request_id)
            next_id = new_id("req")
            run.append(
                Failed(
                    conversation_id=run.conversation_id,
                    attempt_id=run.attempt_id,
                    request_id=request_id,
                    error_type=failure.error_type,
                    http_status=failure.http_status,
                    summary=failure.summary,
                    retryable=True,
                    will_retry=True,
                )
            )
            run.append(
                Retrying(
                    conversation_id=run.conversation_id,
                    message_id=run.message_id,
                    previous_attempt_id=run.attempt_id,
                    attempt_id=run.attempt_id,
                    why="auto",
                    previous_request_id=request_id,
                    request_id=next_id,
                )
            )
            await asyncio.sleep(limits.resend_backoff * (2**resend))
            request_id = next_id
    raise AssertionError("unreachable: the last try returns")  # pragma: no cover


async def _one_request(run: AttemptRun, settings: EngineSettings, tools: list[dict[str, Any]]) -> Outcome:
    limits = settings.limits
    stream: ProviderStream | None = None
    finished = False
    try:
        try:
            async with asyncio.timeout(limits.first_chunk_timeout):
                stream = await open_stream(run.provider, run.messages, tools)
                delta = await anext(stream, None)
        except TimeoutError:
            _timed_out(run)
            raise StreamStalled(limits.first_chunk_timeout, first=True) from None
        loop, idle = asyncio.get_running_loop(), limits.idle_timeout
        turn_began = loop.time()
        try:
            async with asyncio.timeout(None) as deadline:
                while delta is not None:
                    if isinstance(delta, ToolPiece):
                        run.receive_piece(delta)
                    else:
                        run.receive(delta.text, delta.block)
                    now = loop.time()
                    if (deadline.when() or 0.0) < now + idle:  # moved once per IDLE_SLACK, not once per chunk
                        deadline.reschedule(now + idle + IDLE_SLACK)
                    if now - turn_began > TURN_SECONDS:  # buffered chunks never suspend the read: let others run
                        await asyncio.sleep(0)
                        turn_began = loop.time()
                    delta = await anext(stream, None)
        except TimeoutError:
            _timed_out(run)
            raise StreamStalled(limits.idle_timeout, first=False) from None
        finished = True
        return Completed(stream.finish_reason, stream.usage)
    finally:
        if stream is not None:
            await stream.aclose()
        if not finished and run.close_t0 is not None:
            ms = round((time.monotonic() - run.close_t0) * 1000, 2)
            run.append(
                UpstreamClosed(
                    conversation_id=run.conversation_id,
                    attempt_id=run.attempt_id,
                    request_id=run.request_id or "",
                    close_ms=ms,
                )
            )


def _timed_out(run: AttemptRun) -> None:
    run.close_t0 = time.monotonic()
    run.append(
        CancelRequested(
            conversation_id=run.conversation_id,
            attempt_id=run.attempt_id,
            source="timeout",
            keep_partial=True,
            turn=run.turn,
        )
    )
