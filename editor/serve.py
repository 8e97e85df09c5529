"""One editor connection served over a pair of byte streams (the process's stdin and its protocol stdout).

Guarantees: ``protocol_streams`` reads stdin and writes newline-delimited JSON-RPC to the file descriptor it is
given, nothing else (the caller has moved every other writer of stdout away: ``app.acp``). ``serve`` answers the
editor until its input ends (or the task is cancelled); then, before the connection closes, every running turn goes
through the one cancel path with source ``acp`` and ends interrupted at the prefix the ledger holds.
"""

from __future__ import annotations

import asyncio
import os
import sys
from asyncio.streams import FlowControlMixin

from acp import AgentSideConnection

from editor.agent import LedgerAgent
from engine.commands import Engine

#: the largest JSON-RPC line read (the SDK's default for stdio: room for embedded resources)
LINE_LIMIT = 50 * 1024 * 1024


async def protocol_streams(out_fd: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A reader of stdin and a writer to ``out_fd`` on the running loop."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(FlowControlMixin, os.fdopen(out_fd, "wb", buffering=0))
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


async def serve(engine: Engine, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Serve one editor until its input ends; every turn still running then is cancelled (source ``acp``)."""
    agent = LedgerAgent(engine)
    conn = AgentSideConnection(agent, writer, reader, listening=False)
    try:
        await conn.listen()
    finally:
        await asyncio.shield(agent.cancel_all())
        await conn.close()
