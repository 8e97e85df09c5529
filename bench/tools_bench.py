"""Agent-turn benchmark: Stop → the tool's handler sees the cancel, and the CPU an extra tool step costs.

    .venv/bin/python -m bench.tools_bench

Real parts only: the engine through litellm against the scripted upstream (in this process, on 127.0.0.1), the
bundled demo tool server over stdio (its own process), real ledger files. The cancel delay is read from the
server's own record (wall clock, same machine). CPU is this process's CPU time (engine + upstream thread; the
tool server's process is not counted), for turns with a tool step against plain turns in the same run. The rows
are also recorded for ``bench.report`` (``bench.result``).
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from bench import result
from engine.commands.assembly import build_engine
from engine.commands.engine import Engine
from store.tinydb.store import Store
from tests.support.engine import make_settings
from tests.support.tools import demo_hub, server_record
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream, serve

STOPS = 20
TURNS = 20


async def stop_to_handler(engine: Engine, upstream: ScriptedUpstream, record: Path) -> list[float]:
    delays = []
    for n in range(STOPS):
        cid = engine.create_conversation()
        upstream.plan(Behavior(text="", tool_calls=[PlannedCall("slow_task", '{"seconds": 30}', f"call_{n}")]))
        await engine.submit(cid, "slow job")
        while "tool_progress" not in [e.KIND for e in engine.events(cid)]:
            await asyncio.sleep(0.005)
        before = len([r for r in server_record(record) if r["event"] == "slow_task_cancelled"])
        stopped = time.time()
        await engine.cancel(cid, "user")
        while True:
            seen = [r for r in server_record(record) if r["event"] == "slow_task_cancelled"]
            if len(seen) > before:
                delays.append((seen[-1]["t"] - stopped) * 1000)
                break
            await asyncio.sleep(0.001)
    return delays


async def cpu_per_turn(engine: Engine, upstream: ScriptedUpstream, with_tool: bool) -> float:
    started = time.process_time()
    for n in range(TURNS):
        cid = engine.create_conversation()
        answer = Behavior(text="The answer is 391, as computed.", chunk_delay=0.0)
        if with_tool:
            call = PlannedCall("calculator", '{"expression": "17*23"}', f"call_cpu_{n}")
            upstream.plan(Behavior(text="", tool_calls=[call], chunk_delay=0.0), answer)
        else:
            upstream.plan(answer)
        await engine.submit(cid, "compute 17*23")
        while engine.is_streaming(cid):
            await asyncio.sleep(0.002)
    return (time.process_time() - started) / TURNS * 1000


async def main() -> None:
    for upstream in serve(chunk_delay=0.0):
        with tempfile.TemporaryDirectory() as tmp:
            hub, record = await demo_hub(Path(tmp))
            engine = build_engine(Store.open(Path(tmp) / "data"), make_settings(upstream.base_url), hub)
            await cpu_per_turn(engine, upstream, True)  # warm up imports, tokenizer, connections
            delays = await stop_to_handler(engine, upstream, record)
            plain = statistics.median([await cpu_per_turn(engine, upstream, False) for _ in range(3)])
            tool = statistics.median([await cpu_per_turn(engine, upstream, True) for _ in range(3)])
            await engine.shutdown()
            engine.store.close()
            await hub.stop()
    delays.sort()
    print(
        f"Stop -> tool handler saw the cancel ({STOPS} stops): median {statistics.median(delays):.1f} ms, "
        f"p95 {delays[int(len(delays) * 0.95) - 1]:.1f} ms, max {delays[-1]:.1f} ms"
    )
    print(
        f"CPU per turn ({TURNS} turns, median of 3): plain {plain:.1f} ms, with one tool step {tool:.1f} ms "
        f"-> extra per tool step {tool - plain:.1f} ms ({tool / plain:.2f}x)"
    )
    result.row(
        "bench.tools_bench",
        f"Stop during a running tool -> the tool's handler sees the cancel ({STOPS} stops, demo server over stdio)",
        f"median {statistics.median(delays):.1f} ms, p95 {delays[int(len(delays) * 0.95) - 1]:.1f} ms",
    )
    result.row(
        "bench.tools_bench",
        f"CPU of a turn with one tool step (engine + upstream in one process, {TURNS} turns, median of 3)",
        f"{tool:.1f} ms",
        f"a plain turn: {plain:.1f} ms ({tool / plain:.2f}x, +{tool - plain:.1f} ms per tool step)",
    )
    result.save()


if __name__ == "__main__":
    asyncio.run(main())
