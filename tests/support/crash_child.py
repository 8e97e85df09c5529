"""Child process for the crash test: streams one answer into a real store, then waits to be killed."""

from __future__ import annotations

import asyncio
import sys

from engine.commands.assembly import build_engine
from store.tinydb.store import Store
from tests.support.engine import current_attempt, make_settings


async def main(data_dir: str, base_url: str) -> None:
    engine = build_engine(Store.open(data_dir, flush_interval=0.05), make_settings(base_url))
    cid = engine.create_conversation()
    _, message_id = await engine.submit(cid, "tell me a long story")
    while True:
        attempt = current_attempt(engine, cid, message_id)
        if attempt.chunks_rendered >= 20:
            await engine.store.flush()
            print(f"STREAMING {cid} {message_id}", flush=True)
            break
        if not attempt.is_live:
            print(f"ENDED {attempt.status} {attempt.error_summary}", flush=True)
            return
        await asyncio.sleep(0.01)  # the poll interval of a condition wait, not a synchronization sleep
    await asyncio.sleep(3600)  # stream on until the test kills this process


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
