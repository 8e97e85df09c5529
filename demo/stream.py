"""One answer paced at a human pace, following its ``Behavior``, in no dialect yet; the record of what it did.

Guarantees:
- ``paced`` yields dialect-free ``Piece`` values: the reasoning first, word by word, then the text word by word,
  then each tool call (its start, then its arguments in ``call.pieces`` parts), each followed by ``chunk_delay``;
  ``first_delay`` passes before anything. A dialect (``demo.dialects``) writes each piece in its own wire format.
- The in-stream faults, at that chunk of the text: ``drop_after`` raises ``InjectedDrop`` (the connection is cut
  the ``drop_how`` way: ``tracked`` ends the body cleanly without the end marker, resets it, or lets the server
  close it mid-body), ``malformed_after`` yields one ``malformed`` piece and ends, ``error_after`` one ``error`` piece
  (the provider's in-stream error, its message the behaviour's) and ends, ``stall_after`` sends nothing for an
  hour (a stall and a drop are counted on through the tool calls' argument pieces: they can come mid-call).
- ``record.chunks_sent`` counts every text and tool-call piece yielded; ``tracked`` wraps a dialect's frames and
  keeps ``disconnected_at`` (the client went away) and ``closed_at`` (the stream ended, any way); the dialect
  sets ``finished`` after its last frame.
- ``prompt_tokens`` is the usage a dialect reports for the request (the behaviour's, else the words sent).
- ``hide_injected_drops`` keeps uvicorn's log free of the tracebacks of drops injected on purpose (idempotent);
  importing this module installs nothing.
"""

from __future__ import annotations

import asyncio
import logging
import re
import socket
import struct
import time
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, Literal

from demo.agent import PlannedCall
from demo.behavior import Behavior, DropHow

__all__ = ["InjectedDrop", "Piece", "RequestRecord", "hide_injected_drops", "paced", "prompt_tokens", "tracked"]


class InjectedDrop(ConnectionAbortedError):
    """Raised inside the response to make the server cut the connection mid-stream (a fault, not a bug);
    ``tracked`` cuts it the behaviour's way (``how``)."""

    def __init__(self, how: DropHow = "incomplete") -> None:
        super().__init__(f"upstream dropped the connection ({how}, fault injection)")
        self.how = how


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
    """What one request asked for and what the upstream did with it (updated while it streams).

    ``messages`` are in OpenAI's shape whatever the dialect (``demo.dialects`` reads each into it); ``raw`` is the
    request body as the dialect received it."""

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
    dialect: str = "openai"
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Piece:
    """One step of an answer: a word of reasoning or text, a tool call's start or a part of its arguments."""

    kind: Literal["reasoning", "text", "call_start", "call_args", "malformed", "error"]
    text: str = ""
    index: int = 0
    call: PlannedCall | None = None


WORD = re.compile(r"\s*\S+\s*")


async def paced(record: RequestRecord, b: Behavior, text: str) -> AsyncGenerator[Piece, None]:
    """The pieces of one answer at the behaviour's pace, with its in-stream faults (see the module)."""
    pieces = WORD.findall(text) or ([] if b.tool_calls else [text])
    if b.first_delay:
        await asyncio.sleep(b.first_delay)
    for thought in WORD.findall(b.reasoning or ""):
        yield Piece("reasoning", thought)
        await asyncio.sleep(b.chunk_delay)
    for n, piece in enumerate(pieces):
        if b.drop_after is not None and n >= b.drop_after:
            raise InjectedDrop(b.drop_how)
        if b.malformed_after is not None and n >= b.malformed_after:
            yield Piece("malformed")
            return
        if b.error_after is not None and n >= b.error_after:
            yield Piece("error", b.message or "Overloaded")
            return
        if b.stall_after is not None and n >= b.stall_after:
            await asyncio.sleep(3600)
        yield Piece("text", piece, index=n)
        record.chunks_sent += 1
        await asyncio.sleep(b.chunk_delay)
    sent = len(pieces)
    for index, call in enumerate(b.tool_calls):
        yield Piece("call_start", index=index, call=call)
        record.chunks_sent += 1
        await asyncio.sleep(b.chunk_delay)
        size = max(1, -(-len(call.arguments) // max(call.pieces, 1)))
        for start in range(0, len(call.arguments), size):
            sent += 1
            if b.drop_after is not None and sent >= b.drop_after:  # counted on from the text's pieces, as a stall
                raise InjectedDrop(b.drop_how)
            if b.stall_after is not None and sent >= b.stall_after:  # counted on from the text's pieces
                await asyncio.sleep(3600)
            yield Piece("call_args", call.arguments[start : start + size], index=index, call=call)
            record.chunks_sent += 1
            await asyncio.sleep(b.chunk_delay)


async def tracked(
    record: RequestRecord, frames: AsyncGenerator[str, None], transport: asyncio.BaseTransport | None = None
) -> AsyncIterator[str]:
    """``frames`` as they are, noting in ``record`` when the client went away and when the stream ended; an
    ``InjectedDrop`` cuts the connection its way: ``clean`` ends the body here (no end marker follows), ``reset``
    aborts ``transport`` with a TCP reset (mid-body where no transport is known), ``incomplete`` leaves the body
    without its end (the server closes the connection)."""
    try:
        async with aclosing(frames):
            async for frame in frames:
                yield frame
    except InjectedDrop as drop:
        if drop.how == "clean":
            return
        if drop.how == "reset" and transport is not None:
            _reset(transport)
        raise
    except (asyncio.CancelledError, GeneratorExit):
        record.disconnected_at = time.monotonic()
        raise
    finally:
        record.closed_at = time.monotonic()


def _reset(transport: asyncio.BaseTransport) -> None:
    """Abort the connection with a TCP reset (``SO_LINGER`` 0), not a FIN."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()  # type: ignore[attr-defined]


def prompt_tokens(record: RequestRecord, b: Behavior) -> int:
    """The prompt tokens a dialect reports: the behaviour's, else the words of the messages sent."""
    if b.input_tokens is not None:
        return b.input_tokens
    return sum(len(str(m.get("content", "")).split()) for m in record.messages)
