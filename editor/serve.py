"""One editor connection served over a pair of byte streams (the process's stdin and its protocol stdout).

Guarantees: ``protocol_streams`` reads stdin and writes newline-delimited JSON-RPC to the file descriptor it is
given, nothing else (the caller has moved every other writer of stdout away: ``app.acp``). ``serve`` answers the
editor until its input ends (or the task is cancelled); then, before the connection closes, every running turn goes
through the one cancel path with source ``acp`` and ends interrupted at the prefix the ledger holds, and the tool
servers the editor's sessions brought are stopped (``LedgerAgent.close``).
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
import threading
from asyncio.streams import FlowControlMixin
from typing import Any

from acp import AgentSideConnection

from editor.agent import LedgerAgent
from engine.commands import Engine

#: the largest JSON-RPC line read (the SDK's default for stdio: room for embedded resources)
LINE_LIMIT = 50 * 1024 * 1024


async def protocol_streams(out_fd: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A reader of stdin and a writer to ``out_fd`` on the running loop (a pipe, as editors start agents; a file
    or terminal is written to directly; stdin that cannot be polled, such as a file, is read on a thread)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    mode = os.fstat(sys.stdin.fileno()).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    else:  # a file, a terminal or /dev/null (not always pollable): read on a thread instead
        _feed_on_a_thread(loop, reader)
    if stat.S_ISREG(os.fstat(out_fd).st_mode):
        return reader, asyncio.StreamWriter(_FileTransport(out_fd), FlowControlMixin(loop), None, loop)
    transport, protocol = await loop.connect_write_pipe(FlowControlMixin, os.fdopen(out_fd, "wb", buffering=0))
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


def _feed_on_a_thread(loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader) -> None:
    def read() -> None:
        try:
            while line := sys.stdin.buffer.readline():
                loop.call_soon_threadsafe(reader.feed_data, line)
        finally:
            loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=read, name="stdin", daemon=True).start()


class _FileTransport(asyncio.WriteTransport):
    """Writes to a regular file at once (a pipe transport refuses files: stdout redirected to one)."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self.fd, self.closing = fd, False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def can_write_eof(self) -> bool:
        return False


async def serve(engine: Engine, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Serve one editor until its input ends; every turn still running then is cancelled (source ``acp``)."""
    agent = LedgerAgent(engine)

    def answered(event: Any) -> None:  # each message written to the editor
        if event.direction.value == "outgoing":
            agent.answered(event.message)

    conn = AgentSideConnection(agent, writer, reader, listening=False, observers=[answered])
    try:
        await conn.listen()
    finally:
        await asyncio.shield(agent.close())
        await conn.close()
