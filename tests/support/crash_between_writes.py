"""Child process for the torn-batch crash test: streams an answer into a real TinyDB store, then presses Stop and
dies (``os._exit``, as a kill -9 would leave it) at the one moment between the batch's index write and its
conversation file write: the index on disk already says what the Stop's batch did, the conversation file does
not hold that batch."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from engine.commands.assembly import build_engine
from store.tinydb.store import Store
from tests.support.engine import current_attempt, make_settings


async def main(data_dir: str, base_url: str) -> None:
    store = Store.open(data_dir, flush_interval=0.05)
    engine = build_engine(store, make_settings(base_url))
    cid = engine.create_conversation()
    _, message_id = await engine.submit(cid, "tell me a long story")
    while current_attempt(engine, cid, message_id).chunks_rendered < 20:
        await asyncio.sleep(0.01)  # the poll interval of a condition wait, not a synchronization sleep
    assert await engine.store.flush()
    print(f"STREAMING {cid} {message_id}", flush=True)
    files: Any = store._files
    write_index = files.write_index

    def index_then_die(*args: Any) -> None:
        write_index(*args)  # the index is durable ...
        files.write = lambda *_: os._exit(137)  # ... and the process dies before the conversation's events are

    files.write_index = index_then_die
    await engine.cancel(cid, "user")
    await asyncio.sleep(3600)  # the writer thread ends the process


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
