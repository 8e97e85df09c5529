"""One answer streamed at a human pace, following its ``Behavior``, and the record of what the stream did.

Guarantees:
- ``answer_stream`` yields SSE events: the reasoning first, word by word (``reasoning_content`` deltas), then the
  text word by word (the first delta carries ``role``), then the tool calls, each after ``chunk_delay``; then a
  final chunk with ``finish_reason`` (``tool_calls`` or ``stop``), the usage chunk when asked for and the
  behaviour allows it, and ``data: [DONE]``. ``first_delay`` passes before anything is sent.
- The in-stream faults: ``drop_after`` raises ``InjectedDrop`` (the server cuts the connection), ``malformed_after``
  sends a broken chunk and ends, ``stall_after`` sends nothing for an hour; each at that chunk of the text.
- The ``RequestRecord`` is kept up to date: ``chunks_sent`` after every text or tool-call chunk, ``finished`` after
  ``[DONE]``, ``disconnected_at`` when the client went away, ``closed_at`` whenever the stream ends.
- ``hide_injected_drops`` keeps uvicorn's log free of the tracebacks of drops injected on purpose (idempotent);
  importing this module installs nothing.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from demo.behavior import Behavior
from demo.sse import DONE, MALFORMED, chunk, event, tool_call_events, usage_chunk


class InjectedDrop(ConnectionAbortedError):
    """Raised inside the response to make the server cut the connection mid-stream (a fault, not a bug)."""


class _HideInjectedDrops(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], InjectedDrop))


_FILTER = _HideInjectedDrops()


def hide_injected_drops() -> None:
    """Keep uvicorn's log free of the tracebacks of drops injected on purpose (idempotent)."""
    logger = logging.getLogger("uvicorn.error")
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)


@dataclass
class RequestRecord:
    """What one request asked for and what the upstream did with it (updated while it streams)."""

    number: int
    messages: list[dict[str, Any]]
    model: str
    received_at: float
    status: int = 200
    chunks_sent: int = 0
    finished: bool = False
    disconnected_at: float | None = None
    closed_at: float | None = None
    headers: dict[str, str] = field(default_factory=dict)
    tools: list[str] = field(default_factory=list)


async def answer_stream(record: RequestRecord, b: Behavior, text: str, usage: bool, model: str) -> AsyncIterator[str]:
    """The SSE events of one answer (see the module's guarantees); ``usage``: the request asked for it."""
    pieces = re.findall(r"\s*\S+\s*", text) or ([] if b.tool_calls else [text])
    sent = 0
    try:
        if b.first_delay:
            await asyncio.sleep(b.first_delay)
        for n, piece in enumerate(re.findall(r"\s*\S+\s*", b.reasoning or "")):
            thought = {"role": "assistant", "reasoning_content": piece} if not n else {"reasoning_content": piece}
            yield event(chunk(model, thought))
            await asyncio.sleep(b.chunk_delay)
        for n, piece in enumerate(pieces):
            if b.drop_after is not None and n >= b.drop_after:
                raise InjectedDrop("upstream dropped the connection (fault injection)")
            if b.malformed_after is not None and n >= b.malformed_after:
                yield MALFORMED
                record.chunks_sent = sent
                return
            if b.stall_after is not None and n >= b.stall_after:
                await asyncio.sleep(3600)
            delta = {"content": piece} if n else {"role": "assistant", "content": piece}
            yield event(chunk(model, delta))
            sent += 1
            record.chunks_sent = sent
            await asyncio.sleep(b.chunk_delay)
        for index, call in enumerate(b.tool_calls):
            async for piece in tool_call_events(model, index, call):
                yield piece
                sent += 1
                record.chunks_sent = sent
                await asyncio.sleep(b.chunk_delay)
        yield event(chunk(model, {}, finish_reason="tool_calls" if b.tool_calls else "stop"))
        if usage and b.usage:
            prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in record.messages)
            yield event(usage_chunk(model, prompt_tokens, len(pieces)))
        yield DONE
        record.finished = True
    except (asyncio.CancelledError, GeneratorExit):
        record.disconnected_at = time.monotonic()
        raise
    finally:
        record.closed_at = time.monotonic()
