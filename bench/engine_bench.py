"""Engine benchmark (not a test): cancel-to-upstream-close latency and chunk throughput vs a bare litellm loop.

    .venv/bin/python -m bench.engine_bench

Runs the test upstream on 127.0.0.1 and a real store in a temp dir. Prints:
- Stop -> upstream closed, over 50 cancels mid-stream: as the engine measured it (``upstream_closed.close_ms``)
  and as the upstream saw it (its generator cancelled by the disconnect); median and p95;
- chunks per second and CPU ms per chunk for a 2,000-chunk answer sent as fast as possible, through the engine
  (ledger, reducer, store) and through a bare ``litellm.acompletion`` loop, and their ratio.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time

from demo.endpoint import serve_in_thread
from engine.engine import Engine
from engine.offline import litellm
from store.tinydb.store import Store
from tests.support.engine import make_settings
from tests.support.upstream import Behavior, ScriptedUpstream

N_CANCELS = 50
N_CHUNKS = 2000


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


async def cancel_latency(engine: Engine, upstream: ScriptedUpstream) -> tuple[list[float], list[float]]:
    engine_ms, upstream_ms = [], []
    cid = engine.create_conversation()
    for n in range(N_CANCELS):
        upstream.plan(Behavior(text="tok " * 400, chunk_delay=0.01))
        _, mid = await engine.submit(cid, f"q{n}")
        while True:
            conv = engine.conversation(cid)
            if conv.attempts[conv.messages[mid].current_attempt_id].chunks_rendered >= 5 + n % 7:
                break
            await asyncio.sleep(0.002)
        record = upstream.records[-1]
        t0 = time.monotonic()
        await engine.cancel(cid, "user")
        closed = [e for e in engine.store.events(cid) if e.KIND == "upstream_closed"][-1]
        engine_ms.append(closed.close_ms or 0.0)
        while record.disconnected_at is None:
            await asyncio.sleep(0.001)
        upstream_ms.append((record.disconnected_at - t0) * 1000)
    return engine_ms, upstream_ms


async def engine_rate(engine: Engine, upstream: ScriptedUpstream) -> tuple[float, float]:
    upstream.plan(Behavior(text="t " * N_CHUNKS, chunk_delay=0))
    cid = engine.create_conversation()
    cpu0, t0 = time.process_time(), time.perf_counter()
    _, mid = await engine.submit(cid, "go")
    while engine.is_streaming(cid):
        await asyncio.sleep(0.005)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    conv = engine.conversation(cid)
    n = conv.attempts[conv.messages[mid].current_attempt_id].chunks_rendered
    return n / wall, cpu * 1000 / n


async def bare_rate(base: str, upstream: ScriptedUpstream) -> tuple[float, float]:
    upstream.plan(Behavior(text="t " * N_CHUNKS, chunk_delay=0))
    cpu0, t0 = time.process_time(), time.perf_counter()
    response = await litellm().acompletion(
        model="openai/test-model",
        api_base=base,
        api_key="x",
        stream=True,
        messages=[{"role": "user", "content": "go"}],
        max_retries=0,
        num_retries=0,
        stream_options={"include_usage": True},
        timeout=120.0,
    )
    n = 0
    try:
        async for chunk in response:
            if chunk.choices and chunk.choices[0].delta.content:
                n += 1
    finally:
        await response.aclose()
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    return n / wall, cpu * 1000 / n


async def main() -> None:
    upstream = ScriptedUpstream(chunk_delay=0.01)
    base, stop = serve_in_thread(upstream)
    litellm()
    with tempfile.TemporaryDirectory() as tmp:
        engine = Engine(Store.open(tmp), make_settings(base))
        await bare_rate(base, upstream)  # warm up imports and connections
        first = len(upstream.records)
        e_ms, u_ms = await cancel_latency(engine, upstream)
        never = sum(1 for r in upstream.records[first:] if r.finished or r.disconnected_at is None)
        print(f"Stop -> upstream closed over {N_CANCELS} cancels mid-stream:")
        print(
            f"  engine-measured (close_ms):   median {statistics.median(e_ms):.2f} ms, p95 {pct(e_ms, 0.95):.2f} ms,"
            f" max {max(e_ms):.2f} ms"
        )
        print(
            f"  seen by the upstream:          median {statistics.median(u_ms):.2f} ms, p95 {pct(u_ms, 0.95):.2f} ms,"
            f" max {max(u_ms):.2f} ms; never closed: {never} of {N_CANCELS}"
        )
        bare, eng = [], []
        for _ in range(5):  # interleaved, so that machine noise hits both alike
            bare.append(await bare_rate(base, upstream))
            eng.append(await engine_rate(engine, upstream))
        b_rate, b_cpu = statistics.median(r for r, _ in bare), statistics.median(c for _, c in bare)
        e_rate, e_cpu = statistics.median(r for r, _ in eng), statistics.median(c for _, c in eng)
        print(
            f"Throughput, {N_CHUNKS}-chunk answer as fast as the upstream can send (median of 5; the upstream "
            "shares this process's CPU):"
        )
        print(f"  bare litellm loop: {b_rate:,.0f} chunks/s, {b_cpu:.3f} CPU ms/chunk")
        print(f"  through the engine: {e_rate:,.0f} chunks/s, {e_cpu:.3f} CPU ms/chunk")
        print(
            f"  engine/bare rate ratio {e_rate / b_rate:.2f}; engine overhead {e_cpu - b_cpu:.3f} CPU ms/chunk "
            f"({(e_cpu - b_cpu) / b_cpu * 100:.0f}% on top of litellm)"
        )
        await engine.shutdown()
        engine.store.close()
    stop()


if __name__ == "__main__":
    asyncio.run(main())
