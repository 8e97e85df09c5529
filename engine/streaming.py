"""The stream task of one attempt: requests, automatic re-sends before the first chunk, timeouts, closing.

Guarantees:
- Every HTTP stream is closed in a ``finally`` (``aclose``), whether the answer completed, failed, timed out or
  the task was cancelled; when it was closed early, ``upstream_closed`` records the milliseconds since the
  cancel (or timeout) was decided.
- A retryable failure before the first chunk is re-sent (new request_id, same attempt) after a backoff, at most
  ``max_resends`` times; after text was delivered nothing is ever re-sent.
- A first-chunk or idle timeout goes through the same path as a cancel (``cancel_requested`` with source
  ``timeout``, stream closed) and ends the attempt as failed with error_type ``timeout``.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from engine.attempt import Active, Broken, Completed, Outcome
from engine.failures import StreamStalled, classify
from engine.provider import ProviderStream, open_stream
from engine.stamps import new_id, now_iso
from ledger.events import CancelRequested, Failed, RequestSent, Retrying, UpstreamClosed

if TYPE_CHECKING:
    from engine.engine import Engine


async def stream_attempt(engine: Engine, active: Active) -> Outcome:
    settings = engine.settings
    request_id = new_id("req")
    for resend in range(settings.max_resends + 1):
        active.request_id = request_id
        engine._append(
            RequestSent(
                conversation_id=active.conversation_id,
                attempt_id=active.attempt_id,
                request_id=request_id,
                model=settings.provider.model,
                params=settings.provider.public_params(),
                context_message_ids=active.context_ids,
            )
        )
        active.sent_at, active.sent_mono = active.sent_at or now_iso(), time.monotonic()
        try:
            return await _one_request(engine, active)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - every provider error is classified, none escapes
            failure = classify(exc)
            if isinstance(exc, StreamStalled | TimeoutError):
                return Broken(failure, request_id)
            if not (failure.retryable and active.chunk_count == 0 and resend < settings.max_resends):
                return Broken(failure, request_id)
            next_id = new_id("req")
            engine._append(
                Failed(
                    conversation_id=active.conversation_id,
                    attempt_id=active.attempt_id,
                    request_id=request_id,
                    error_type=failure.error_type,
                    http_status=failure.http_status,
                    summary=failure.summary,
                    retryable=True,
                    will_retry=True,
                )
            )
            engine._append(
                Retrying(
                    conversation_id=active.conversation_id,
                    message_id=active.message_id,
                    previous_attempt_id=active.attempt_id,
                    attempt_id=active.attempt_id,
                    why="auto",
                    previous_request_id=request_id,
                    request_id=next_id,
                )
            )
            await asyncio.sleep(settings.resend_backoff * (2**resend))
            request_id = next_id
    raise AssertionError("unreachable: the last try returns")  # pragma: no cover


async def _one_request(engine: Engine, active: Active) -> Outcome:
    settings = engine.settings
    stream: ProviderStream | None = None
    finished = False
    try:
        try:
            async with asyncio.timeout(settings.first_chunk_timeout):
                stream = await open_stream(settings.provider, active.messages)
                delta = await anext(stream, None)
        except TimeoutError:
            _timed_out(engine, active)
            raise StreamStalled(settings.first_chunk_timeout, first=True) from None
        while delta is not None:
            engine.receive_chunk(active, delta.text, delta.block)
            try:
                async with asyncio.timeout(settings.idle_timeout):
                    delta = await anext(stream, None)
            except TimeoutError:
                _timed_out(engine, active)
                raise StreamStalled(settings.idle_timeout, first=False) from None
        finished = True
        return Completed(stream.finish_reason, stream.usage)
    finally:
        if stream is not None:
            await stream.aclose()
        if not finished and active.close_t0 is not None:
            ms = round((time.monotonic() - active.close_t0) * 1000, 2)
            engine._append(
                UpstreamClosed(
                    conversation_id=active.conversation_id,
                    attempt_id=active.attempt_id,
                    request_id=active.request_id or "",
                    close_ms=ms,
                )
            )


def _timed_out(engine: Engine, active: Active) -> None:
    active.close_t0 = time.monotonic()
    engine._append(
        CancelRequested(
            conversation_id=active.conversation_id,
            attempt_id=active.attempt_id,
            source="timeout",
            keep_partial=True,
            turn=active.turn,
        )
    )
