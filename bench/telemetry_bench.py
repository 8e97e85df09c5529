"""Telemetry benchmark (not a test): what exporting traces costs a chunk-heavy answer, with and without an endpoint.

    nice -n 10 .venv/bin/python -m bench.telemetry_bench [chunks]

One process, one run, three engines on real stores in a temp dir, each answering the same answer of ``chunks``
chunks (default 5,000) as fast as the test upstream sends them, interleaved round by round (median of 5):
- no endpoint (the baseline);
- ``--otlp-endpoint`` on a real OTLP/HTTP receiver on 127.0.0.1 (decoding with opentelemetry-proto);
- ``--otlp-endpoint`` on a receiver that accepts the connection and never answers.
Prints CPU ms per answer (the whole process: the SDK's export threads included) and per chunk, the ratio to the
baseline, the longest event-loop block seen during the answer (a 5 ms ticker's worst lateness), and the spans each
receiver got. Then the projection alone: folding the stored answer's events into its trace, per chunk. The rows
are also recorded for ``bench.report`` (``bench.result``).
"""

from __future__ import annotations

import asyncio
import gc
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench import result
from demo.server.endpoint import serve_in_thread
from engine.commands.assembly import build_engine
from engine.commands.engine import Engine
from engine.offline import litellm
from engine.telemetry.live import LiveTelemetry
from engine.telemetry.otlp import Endpoint
from ledger.folds.trace import traces
from store.tinydb.store import Store
from tests.support.engine import make_settings
from tests.support.otlp_receiver import OtlpReceiver
from tests.support.upstream import Behavior, ScriptedUpstream

ROUNDS = 9


async def answer(engine: Engine, upstream: ScriptedUpstream, chunks: int, delay: float = 0) -> tuple[float, float]:
    """CPU ms of one answer and the longest loop block (ms) while it streamed."""
    upstream.plan(Behavior(text="t " * chunks, chunk_delay=delay))
    cid = engine.create_conversation()
    worst, running = 0.0, True

    async def ticker() -> None:
        nonlocal worst
        loop = asyncio.get_running_loop()
        while running:
            t = loop.time()
            await asyncio.sleep(0.005)
            worst = max(worst, (loop.time() - t - 0.005) * 1000)

    tick = asyncio.create_task(ticker())
    cpu0 = time.process_time()
    await engine.submit(cid, "go")
    while engine.is_streaming(cid):
        await asyncio.sleep(0.005)
    cpu = (time.process_time() - cpu0) * 1000
    running = False
    await tick
    return cpu, worst


def endpoint(url: str) -> Endpoint:
    return Endpoint(traces_url=f"{url}/v1/traces", metrics_url=f"{url}/v1/metrics", metric_interval=1.0)


async def main(chunks: int) -> None:
    upstream = ScriptedUpstream(chunk_delay=0.01)
    base, stop = serve_in_thread(upstream)
    litellm()
    live_receiver, frozen = OtlpReceiver(), OtlpReceiver(hang=True)
    with tempfile.TemporaryDirectory() as tmp:
        engines = {
            name: build_engine(Store.open(Path(tmp) / name), make_settings(base)) for name in ("none", "live", "frozen")
        }
        exporters = {
            "live": LiveTelemetry(engines["live"], endpoint(live_receiver.url)),
            "frozen": LiveTelemetry(engines["frozen"], endpoint(frozen.url)),
        }
        for engine in engines.values():  # warm up imports, connections, the SDK's threads
            await answer(engine, upstream, 200)
        gc.collect()
        gc.freeze()  # as the app does after start-up: a full collection never walks litellm's modules again
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in engines}
        order = list(engines)
        for n in range(ROUNDS):  # a turning order, so that the machine's drift hits all three alike
            for name in order[n % 3 :] + order[: n % 3]:
                results[name].append(await answer(engines[name], upstream, chunks))
        await asyncio.to_thread(exporters["live"].flush)
        base_cpu = statistics.median(c for c, _ in results["none"])
        print(f"One {chunks:,}-chunk answer as fast as the upstream sends (median of {ROUNDS}, same run):")
        for name, label in (
            ("none", "no endpoint"),
            ("live", "endpoint answering"),
            ("frozen", "endpoint never answers"),
        ):
            cpu = statistics.median(c for c, _ in results[name])
            blocks = sorted(b for _, b in results[name])
            print(
                f"  {label:24s} {cpu:8.1f} CPU ms/answer  {cpu * 1000 / chunks:6.1f} µs/chunk  "
                f"x{cpu / base_cpu:.3f} of baseline  longest loop block: median {statistics.median(blocks):5.1f} ms, "
                f"max {blocks[-1]:5.1f} ms"
            )
            if name != "none":
                result.row(
                    "bench.telemetry_bench",
                    f"exporting traces, one {chunks:,}-chunk answer as fast as the upstream sends, {label} "
                    f"(median of {ROUNDS}, turning order)",
                    f"{cpu:.0f} CPU ms per answer, longest loop block {blocks[-1]:.0f} ms",
                    f"no endpoint: {base_cpu:.0f} ms ({cpu / base_cpu:.2f}x), longest loop block "
                    f"{max(b for _, b in results['none']):.0f} ms",
                )
        paced: dict[str, list[float]] = {name: [] for name in engines}
        for n in range(3):  # at a pace (2 ms apart) the upstream's thread does not hold the GIL for the whole answer
            for name in order[n % 3 :] + order[: n % 3]:
                paced[name].append((await answer(engines[name], upstream, 1000, 0.002))[1])
        print(
            "  longest loop block, 1,000 chunks 2 ms apart (3 answers each): "
            + ", ".join(f"{name} {max(blocks):.1f} ms" for name, blocks in paced.items())
            + f"; load average {os.getloadavg()[0]:.1f}"
        )
        spans = len(live_receiver.spans)
        print(f"  spans received: answering {spans}, frozen receiver requests {frozen.requests} (none answered)")
        store = engines["live"].store
        stored = [store.events(cid) for cid in store.conversation_ids()]
        t0 = time.process_time()
        values = [value for events in stored for value in traces(events)]
        fold_ms = (time.process_time() - t0) * 1000
        folded = sum(1 for events in stored for e in events if e.KIND == "chunk")
        per_chunk = fold_ms * 1e6 / max(1, folded)
        print(
            f"  projection alone (events already read): {fold_ms:.1f} CPU ms for {folded:,} chunks, "
            f"{per_chunk:.0f} ns/chunk"
        )
        print(f"  ({len(values)} traces)")
        result.row(
            "bench.telemetry_bench", "the trace projection alone (events already read)", f"{per_chunk:.0f} ns per chunk"
        )
        for live in exporters.values():
            await live.close(timeout=1.0)
        for engine in engines.values():
            await engine.shutdown()
            engine.store.close()
    live_receiver.close()
    frozen.close()
    stop()
    result.save()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000))
