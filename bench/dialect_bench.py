"""The issue's table stream in every dialect (issue 39, item 3): app CPU per answer against litellm's bare loop.

    .venv/bin/python -m bench.dialect_bench [--runs 5] [--dialects openai,anthropic,gemini,ollama] [--quick]

For each dialect the scripted upstream speaks (``tests.support.dialects``: OpenAI, Anthropic, Gemini, Ollama), one
500-token answer that is one paragraph, 10 ms apart, counted in headless Chromium from Send to complete
(``bench.stream_bench.measure``): the app's whole process on its default route (the light route: every one of
these dialects has one), the app on litellm's plain route (``LEDGER_CHAT_STREAM_ROUTE=litellm``), the bare
``litellm.acompletion(stream=True)`` loop on that dialect (litellm's stream wrapper, nothing else) and, for scale,
the bare loop on the engine's route (``engine.provider.routes.open_stream`` alone), each bare loop in a process of its
own. The upstream runs in this process; every side is measured back to back in an order that turns from run to run,
and a ratio is the median of each run's ratio (``bench.stream_bench.paired``). Target (issue 39): the app <= 1.2x
the bare litellm loop on every route and dialect. ``--quick``: 3 runs. Rows go to ``bench.report``
(``bench.result``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench import result
from bench.stream_bench import CHAT, LAST, Timed, line, measure, one_paragraph, paired, verdict
from demo.server.endpoint import serve_in_thread
from engine.provider.light_route import ROUTE_VARIABLE
from tests.support.app_process import ROOT, AppProcess
from tests.support.dialects import DIALECTS, MODELS
from tests.support.upstream import Behavior, ScriptedUpstream

BENCH = "bench.dialect_bench"
#: The keys litellm asks for in each dialect (the scripted upstream takes any).
KEYS = {"OPENAI_API_KEY": "sk-bench", "ANTHROPIC_API_KEY": "sk-bench", "GEMINI_API_KEY": "bench"}
SIDES = ("app, light route", "app, plain route", "bare litellm loop", "bare engine-route loop")
TARGET = 1.2


def api_base(dialect: str, base: str) -> str:
    """``base`` is the upstream's ``/v1`` URL (OpenAI's); the other dialects take its root."""
    return base if dialect == "openai" else base.removesuffix("/v1")


def answer() -> Behavior:
    return Behavior(text=one_paragraph(500), chunk_delay=0.01)


def bare(dialect: str, base: str, upstream: ScriptedUpstream, kind: str) -> float:
    """CPU seconds of one bare loop on the table stream, in its own process (a warm-up answer first)."""
    upstream.plan(Behavior(text="warm up", chunk_delay=0), answer())
    out = subprocess.run(
        [sys.executable, "-m", BENCH, "--bare", dialect, api_base(dialect, base), kind],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, **KEYS, "PYTHONPATH": str(ROOT)},
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return float(out.stdout.split()[-1])


def bare_loop(dialect: str, base: str, kind: str) -> None:
    from engine.offline import litellm

    ll = litellm()
    messages = [{"role": "user", "content": "stream please"}]

    async def plain() -> None:
        response = await ll.acompletion(
            model=MODELS[dialect], api_base=base, messages=messages, stream=True,
            stream_options={"include_usage": True}, max_retries=0,
        )  # fmt: skip
        parts = []
        async for chunk in response:
            if chunk.choices and chunk.choices[0].delta is not None:
                delta = chunk.choices[0].delta
                parts.append((delta.content or "") + (getattr(delta, "reasoning_content", None) or ""))

    async def route() -> None:
        from engine.provider.calls import ProviderConfig
        from engine.provider.routes import open_stream

        stream = await open_stream(ProviderConfig(model=MODELS[dialect], api_base=base, api_key="sk-bench"), messages)
        try:
            [getattr(piece, "text", "") async for piece in stream]
        finally:
            await stream.aclose()

    go = {"litellm": plain, "route": route}[kind]
    asyncio.run(go())  # warm-up: the first request builds litellm's clients
    cpu0 = time.process_time()
    asyncio.run(go())
    print(time.process_time() - cpu0)


def one_dialect(dialect: str, tmp: Path, upstream: ScriptedUpstream, timed: Timed, base: str, runs: int) -> None:
    lag = tmp / "lag.txt"
    lag.touch()
    model = ("--model", MODELS[dialect], "--api-base", api_base(dialect, base))
    forced = {**KEYS, ROUTE_VARIABLE: "litellm"}
    apps = {
        "app, light route": AppProcess(tmp / f"data-{dialect}-light", None, *model, env=KEYS),
        "app, plain route": AppProcess(tmp / f"data-{dialect}-plain", None, *model, env=forced),
    }
    paths = dict.fromkeys(apps, "/")  # each app's one chat (the chat list does not grow between runs)
    cpu: dict[str, list[float]] = {side: [] for side in SIDES}

    def app_side(name: str) -> Callable[[], None]:
        def run() -> None:
            CHAT["path"] = paths[name]
            cpu[name].append(measure(apps[name], upstream, timed, answer(), lag).cpu)
            paths[name] = CHAT["path"]

        return run

    sides = [app_side(name) for name in apps]
    sides.append(lambda: cpu["bare litellm loop"].append(bare(dialect, base, upstream, "litellm")))
    sides.append(lambda: cpu["bare engine-route loop"].append(bare(dialect, base, upstream, "route")))
    for app in apps.values():
        app.start()
    try:
        for name in apps:  # warm-up (first page, first render), not counted
            app_side(name)()
            cpu[name].clear()
        for n in range(runs):
            for measured in sides[n % len(sides) :] + sides[: n % len(sides)]:
                measured()
    finally:
        for app in apps.values():
            app.stop()
    floor = cpu["bare litellm loop"]
    print(f"  {dialect} ({MODELS[dialect]}), CPU per answer, medians of {runs}:")
    for side in SIDES:
        ratio = paired(cpu[side], floor)
        target = side.startswith("app")
        line(f"{side} / bare litellm loop", f"{statistics.median(cpu[side]) * 1000:.0f} ms, {ratio:.2f}x",
             f"<= {TARGET}x" if target else "-", verdict(ratio, TARGET) if target else "")  # fmt: skip
    print(f"  (CPU of each run: {', '.join(f'{s} {[round(c, 3) for c in cpu[s]]} s' for s in SIDES)})")
    what = (
        f"one 500-token paragraph, 10 ms apart, Send -> complete in Chromium, {dialect} dialect ({MODELS[dialect]}), "
        f"{runs} runs taking turns"
    )
    floor_ms = statistics.median(floor) * 1000
    light = paired(cpu["app, light route"], floor)
    plain = paired(cpu["app, plain route"], floor)
    route = paired(cpu["bare engine-route loop"], floor)
    result.row(
        BENCH,
        what + ": app CPU per answer on its default (light) route",
        f"{statistics.median(cpu['app, light route']) * 1000:.0f} ms",
        f"bare litellm.acompletion(stream=True) loop: {floor_ms:.0f} ms, {light:.2f}x (target <= {TARGET}x); "
        f"bare engine-route loop {route:.2f}x the litellm loop (medians of each run's ratio)",
    )
    result.row(
        BENCH,
        what + ": app CPU per answer on litellm's plain route (LEDGER_CHAT_STREAM_ROUTE=litellm)",
        f"{statistics.median(cpu['app, plain route']) * 1000:.0f} ms",
        f"bare litellm.acompletion(stream=True) loop: {floor_ms:.0f} ms, {plain:.2f}x (target <= {TARGET}x)",
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bare", nargs=3, metavar=("DIALECT", "API_BASE", "KIND"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dialects", default=",".join(DIALECTS))
    parser.add_argument("--quick", action="store_true", help="3 runs")
    args = parser.parse_args()
    if args.bare:
        bare_loop(*args.bare)
        return
    runs = min(args.runs, 3) if args.quick else args.runs
    upstream = ScriptedUpstream()
    timed = Timed(upstream.app)
    upstream.app = timed  # type: ignore[assignment]
    base, stop = serve_in_thread(upstream)
    print(f"(a) per dialect: one 500-token paragraph, 10 ms apart, in Chromium ({os.cpu_count()} cores; last: {LAST})")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for dialect in args.dialects.split(","):
                one_dialect(dialect, Path(tmp), upstream, timed, base, runs)
    finally:
        stop()
        result.save()


if __name__ == "__main__":
    main()
