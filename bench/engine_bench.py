"""Engine benchmark (not a test): cancel-to-upstream-close latency and chunk throughput against like-for-like loops.

    .venv/bin/python -m bench.engine_bench [--quick]

Runs the test upstream on 127.0.0.1 and a real store in a temp dir. Prints (and, for ``bench.report``, records):
- Stop -> upstream closed, over 50 cancels mid-stream: as the engine measured it (``upstream_closed.close_ms``)
  and as the upstream saw it (its generator cancelled by the disconnect); median and p95;
- chunks per second and CPU ms per chunk for a 2,000-chunk answer sent as fast as possible, through the engine
  (ledger, reducer, store) on each route, each against a bare loop doing the same client work in the same run:
  the engine on the light route (the default for ``openai/`` models) against a bare loop on that route (the
  engine's ``open_stream``, nothing else) and, for scale, against litellm's plain ``acompletion(stream=True)``
  loop; the engine on litellm's plain route (``LEDGER_CHAT_STREAM_ROUTE=litellm``) against that plain loop.
  "Engine overhead" is only ever engine minus the bare loop of its own route.
``--quick``: 20 cancels, 1,000 chunks, 3 rounds.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable

from bench import result
from demo.server.endpoint import serve_in_thread
from engine.commands.assembly import build_engine
from engine.commands.engine import Engine
from engine.offline import litellm
from engine.provider.calls import ProviderConfig
from engine.provider.light_route import ROUTE_VARIABLE
from engine.provider.routes import open_stream
from store.tinydb.store import Store
from tests.support.engine import make_settings
from tests.support.upstream import Behavior, ScriptedUpstream

BENCH = "bench.engine_bench"
QUICK = "--quick" in sys.argv
N_CANCELS = 20 if QUICK else 50
N_CHUNKS = 1000 if QUICK else 2000
ROUNDS = 3 if QUICK else 5
MESSAGES = [{"role": "user", "content": "go"}]


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


async def plain_rate(base: str, upstream: ScriptedUpstream) -> tuple[float, float]:
    """litellm's plain route with nothing else: ``acompletion(stream=True)`` and its stream wrapper."""
    upstream.plan(Behavior(text="t " * N_CHUNKS, chunk_delay=0))
    cpu0, t0 = time.process_time(), time.perf_counter()
    response = await litellm().acompletion(
        model="openai/test-model",
        api_base=base,
        api_key="x",
        stream=True,
        messages=MESSAGES,
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


async def light_rate(base: str, upstream: ScriptedUpstream) -> tuple[float, float]:
    """The light route with nothing else: the engine's own ``open_stream`` (the same litellm call, the same
    parsing the engine does), each piece read and dropped."""
    upstream.plan(Behavior(text="t " * N_CHUNKS, chunk_delay=0))
    config = ProviderConfig(model="openai/test-model", api_base=base, api_key="x")
    cpu0, t0 = time.process_time(), time.perf_counter()
    stream = await open_stream(config, MESSAGES)
    n = 0
    try:
        async for piece in stream:
            if getattr(piece, "text", ""):
                n += 1
    finally:
        await stream.aclose()
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    return n / wall, cpu * 1000 / n


Measure = Callable[[], Awaitable[tuple[float, float]]]


async def interleaved(sides: dict[str, Measure]) -> dict[str, tuple[float, float]]:
    """Every side once per round, in a turning order, so that machine noise hits all alike; medians."""
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
    names = list(sides)
    for n in range(ROUNDS):
        for name in names[n % len(names) :] + names[: n % len(names)]:
            runs[name].append(await sides[name]())
    return {
        name: (statistics.median(r for r, _ in got), statistics.median(c for _, c in got)) for name, got in runs.items()
    }


def plain_route(on: bool) -> None:
    if on:
        os.environ[ROUTE_VARIABLE] = "litellm"
    else:
        os.environ.pop(ROUTE_VARIABLE, None)


async def main() -> None:
    upstream = ScriptedUpstream(chunk_delay=0.01)
    base, stop = serve_in_thread(upstream)
    litellm()
    with tempfile.TemporaryDirectory() as tmp:
        engine = build_engine(Store.open(tmp), make_settings(base))
        await plain_rate(base, upstream)  # warm up imports and connections
        await light_rate(base, upstream)
        first = len(upstream.records)
        e_ms, u_ms = await cancel_latency(engine, upstream)
        never = sum(1 for r in upstream.records[first:] if r.finished or r.disconnected_at is None)
        print(f"Stop -> upstream closed over {N_CANCELS} cancels mid-stream (light route):")
        print(
            f"  engine-measured (close_ms):   median {statistics.median(e_ms):.2f} ms, p95 {pct(e_ms, 0.95):.2f} ms,"
            f" max {max(e_ms):.2f} ms"
        )
        print(
            f"  seen by the upstream:          median {statistics.median(u_ms):.2f} ms, p95 {pct(u_ms, 0.95):.2f} ms,"
            f" max {max(u_ms):.2f} ms; never closed: {never} of {N_CANCELS}"
        )
        result.row(
            BENCH,
            f"Stop -> upstream closed, {N_CANCELS} cancels mid-stream, engine on the light route",
            f"engine: median {statistics.median(e_ms):.2f} ms, p95 {pct(e_ms, 0.95):.2f} ms; seen by the upstream: "
            f"median {statistics.median(u_ms):.1f} ms, p95 {pct(u_ms, 0.95):.1f} ms; never closed {never}/{N_CANCELS}",
        )

        async def engine_plain() -> tuple[float, float]:
            plain_route(True)
            try:
                return await engine_rate(engine, upstream)
            finally:
                plain_route(False)

        got = await interleaved(
            {
                "engine, light route": lambda: engine_rate(engine, upstream),
                "bare light-route loop": lambda: light_rate(base, upstream),
                "engine, plain route": engine_plain,
                "bare litellm plain loop": lambda: plain_rate(base, upstream),
            }
        )
        print(
            f"Throughput, {N_CHUNKS}-chunk answer as fast as the upstream can send (median of {ROUNDS}, interleaved; "
            "the upstream shares this process's CPU):"
        )
        for name, (rate, cpu) in got.items():
            print(f"  {name:<26} {rate:>9,.0f} chunks/s, {cpu:.3f} CPU ms/chunk")
        pairs = (
            ("engine, light route", "bare light-route loop", "same route, same parsing"),
            ("engine, light route", "bare litellm plain loop", "for scale: a different, heavier client route"),
            ("engine, plain route", "bare litellm plain loop", "same route, same parsing"),
        )
        for side, floor, note in pairs:
            (s_rate, s_cpu), (f_rate, f_cpu) = got[side], got[floor]
            overhead = f"; engine overhead {(s_cpu - f_cpu) * 1000:.0f} µs/chunk" if "same" in note else ""
            print(f"  {side} / {floor}: rate {s_rate / f_rate:.2f}x, CPU {s_cpu / f_cpu:.2f}x{overhead} ({note})")
            result.row(
                BENCH,
                f"{side}: {N_CHUNKS} chunks as fast as the upstream sends (engine + ledger + store; upstream in "
                "the same process)",
                f"{s_rate:,.0f} chunks/s, {s_cpu * 1000:.0f} µs CPU per chunk",
                f"{floor} ({note}): {f_rate:,.0f} chunks/s, {f_cpu * 1000:.0f} µs per chunk; "
                f"CPU {s_cpu / f_cpu:.2f}x{overhead}",
            )
        await engine.shutdown()
        engine.store.close()
    stop()
    result.save()


if __name__ == "__main__":
    asyncio.run(main())
