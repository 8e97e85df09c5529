"""One step's model call: requests, automatic re-sends before the step's first chunk, the watchdog, closing.

Guarantees:
- Every HTTP stream is closed in a ``finally`` (``aclose``), whether the answer completed, failed, or the task was
  cancelled (a Stop, or a timeout); when it was closed early, ``upstream_closed`` records the milliseconds since
  the cancel was decided.
- A retryable failure before the step's first chunk is re-sent (new request_id, same attempt) after a backoff, at
  most ``max_resends`` times; after the step delivered anything nothing is ever re-sent. When the provider said
  how long to wait (``retry-after``, Gemini's ``RetryInfo``) the re-send waits at least that long, and a wait
  over ``MAX_RETRY_AFTER`` is not re-sent automatically: the attempt fails saying the wait asked for.
- Timeouts are a ``Watchdog`` per request, never a cancel of their own: when no first chunk came within
  ``first_chunk_timeout``, or no next chunk within ``idle_timeout``, it rings ``run.time_out``, and the attempt's
  owner enters its one cancel path with source ``timeout`` (``cancel_requested``, then this task is cancelled, so
  the stream is closed here and ``upstream_closed`` recorded), which ends the attempt failed with error_type
  ``timeout``. A watchdog whose request ended before the cancel began changes nothing. The idle deadline is one
  timer for the whole stream, moved at most once per ``IDLE_SLACK`` (not a timer per chunk).
- A stream whose chunks are already buffered (the read never suspends) gives the event loop back every
  ``TURN_SECONDS``, and as soon as all streams together spent the loop turn's share (``engine.turns.loop_share``), so
  pages, cancels and other streams are never starved by a fast provider or by many streams with a backlog.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from engine.provider import AnyStream, StreamStalled, ToolPiece, classify, open_stream
from engine.stamps import new_id, now_iso
from engine.turns.attempt import AttemptRun, Broken, Completed, Outcome
from engine.turns.loop_share import SHARE
from engine.turns.settings import EngineSettings, Limits
from ledger.events import Failed, RequestSent, Retrying, UpstreamClosed

IDLE_SLACK = 0.25  # seconds: the idle timeout fires after idle_timeout to idle_timeout + IDLE_SLACK of silence
TURN_SECONDS = 0.005  # the longest the stream keeps the event loop when chunks arrive faster than it reads
RETRYABLE = {"retryable": True}
MAX_RETRY_AFTER = 30.0  # seconds: a provider asking for a longer wait is not re-sent automatically


class Watchdog:
    """One request's timer: armed for the first chunk, then for the next one; rings ``run.time_out`` once."""

    def __init__(self, run: AttemptRun, limits: Limits) -> None:
        self._run, self._idle = run, limits.idle_timeout
        self._loop = asyncio.get_running_loop()
        self._seconds, self._first = limits.first_chunk_timeout, True
        self._when = self._loop.time() + self._seconds
        self._handle = self._loop.call_at(self._when, self._ring)
        self.armed = True

    def fed(self, now: float) -> None:
        """A delta came: the deadline becomes ``now`` + the idle timeout (moved once per ``IDLE_SLACK``)."""
        if self._first or self._when < now + self._idle:
            self._seconds, self._first = self._idle, False
            self._when = now + self._idle + IDLE_SLACK
            self._handle.cancel()
            self._handle = self._loop.call_at(self._when, self._ring)

    def stop(self) -> None:
        """The request ended (any way): a ring not acted on yet is too late from now on."""
        self.armed = False
        self._handle.cancel()

    def _ring(self) -> None:
        if self.armed:
            self._run.time_out(StreamStalled(self._seconds, first=self._first), lambda: self.armed)


async def stream_step(run: AttemptRun, settings: EngineSettings, tools: list[dict[str, Any]]) -> Outcome:
    """Run the step's requests until one streams to its end, fails for good, or the task is cancelled."""
    limits = settings.limits
    request_id = new_id("req")
    for resend in range(limits.max_resends + 1):
        run.request_id = request_id
        run.append(
            RequestSent(
                **run.ids,
                request_id=request_id,
                model=run.provider.model,
                params=run.provider.public_params(),
                context_message_ids=run.context_ids,
            )
        )
        if run.first_chunk_mono is None:  # the time to first chunk is the first step's (of its last re-send)
            run.sent_at, run.sent_mono = run.sent_at or now_iso(), time.monotonic()
        try:
            return await _one_request(run, limits, tools)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - every provider error is classified, none escapes
            failure = classify(exc)
            if isinstance(exc, TimeoutError):
                return Broken(failure, request_id)
            wait = limits.resend_backoff * (2**resend)
            if failure.retry_after is not None:  # the provider said when: never sooner, and not at all past the cap
                wait = max(wait, failure.retry_after)
            fits = wait <= max(MAX_RETRY_AFTER, limits.resend_backoff * (2**resend))
            if not (failure.retryable and fits and run.step_chunks == 0 and resend < limits.max_resends):
                return Broken(failure, request_id)
            next_id = new_id("req")
            run.append(Failed(**run.ids, request_id=request_id, will_retry=True, **(failure.fields() | RETRYABLE)))
            run.append(
                Retrying(
                    **run.ids,
                    message_id=run.message_id,
                    previous_attempt_id=run.attempt_id,
                    why="auto",
                    previous_request_id=request_id,
                    request_id=next_id,
                )
            )
            await asyncio.sleep(wait)
            request_id = next_id
    raise AssertionError("unreachable: the last try returns")  # pragma: no cover


async def _one_request(run: AttemptRun, limits: Limits, tools: list[dict[str, Any]]) -> Outcome:
    stream: AnyStream | None = None
    finished = False
    watchdog = Watchdog(run, limits)
    try:
        stream = await open_stream(run.provider, run.messages, tools)
        delta = await anext(stream, None)
        loop = asyncio.get_running_loop()
        turn_began = loop.time()
        while delta is not None:
            if isinstance(delta, ToolPiece):
                run.receive_piece(delta)
            else:
                run.receive(delta.text, delta.block)
            now = loop.time()
            watchdog.fed(now)
            if now - turn_began > TURN_SECONDS or SHARE.used_up(loop):  # buffered chunks never suspend: let others run
                await asyncio.sleep(0)
                turn_began = loop.time()
            delta = await anext(stream, None)
        finished = True
        return Completed(stream.finish_reason, stream.usage)
    finally:
        watchdog.stop()
        if stream is not None:
            run.step_reported = stream.reported  # a stopped or broken step keeps what the provider reported
            await stream.aclose()
        if not finished and run.close_t0 is not None:
            ms = round((time.monotonic() - run.close_t0) * 1000, 2)
            run.append(UpstreamClosed(**run.ids, request_id=run.request_id or "", close_ms=ms))
