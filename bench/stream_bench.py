"""Append-only streaming, measured (issue 11): bytes to the browser, app CPU vs like-for-like bare loops, latency.

    .venv/bin/python -m bench.stream_bench [--runs 5] [--chunks 20000] [--skip-long] [--skip-profile] [--quick]
                                           [--per-chunk-only] [--chainlit | --chainlit-venv DIR]

The upstream (``tests.support.upstream``) runs in this process; the app (``main.py``) and the bare loops each run
in a process of their own, so none's CPU includes the upstream's. Everything is measured in one run.
Baselines do the same client work as what they are compared with: the app on the light route (the default for
``openai/`` models) is compared with a bare loop on that route (the engine's ``open_stream``, nothing else) and,
for scale, with litellm's plain ``acompletion(stream=True)`` loop, which parses every chunk into pydantic objects
and costs far more; the app on litellm's plain route (``LEDGER_CHAT_STREAM_ROUTE=litellm``) with that plain loop.
(a) The issue's table stream: a 500-token answer that is one paragraph, 10 ms apart, in headless Chromium, counted
    from Send to complete: websocket payload received, app CPU per answer / each bare loop's CPU on the same
    stream, last token sent by the upstream -> in the DOM (medians; a CPU ratio is the median of each run's
    ratio, the sides measured back to back in a turning order: ``paired``). With ``--chainlit`` (a throwaway venv,
    made here) or ``--chainlit-venv`` (one made before), Chainlit answers the same stream in the same run
    (``bench.chainlit_rival``). Chainlit calls litellm's plain route, so it is compared with the app on that same
    route (the same client floor) and, stated as such, with the app on its light route.
(b) ``--chunks`` chunks of ~5 characters as fast as the upstream can, as one paragraph, one code block and
    reasoning: app CPU / each bare loop, bytes to the browser / answer size (the fixed overhead is what a one-word
    answer costs in the same run), the longest event-loop block (the app samples its loop: ``LC_LOOP_LAG_FILE``),
    and (one profiled run, ``LC_PROFILE_FILE``) the share of the app's loop-thread CPU spent in ledger/reducer.py.
(c) CPU per chunk by route (``--per-chunk-only`` runs only this): the app on each route and three bare loops.
``--quick``: 5,000 chunks, 3 runs, no profile. Rows are recorded for ``bench.report`` (``bench.result``).
"""

from __future__ import annotations

import argparse
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, sync_playwright

from bench import result
from bench.chainlit_rival import Rival, RivalRun
from demo.server.endpoint import serve_in_thread
from engine.provider.light_route import ROUTE_VARIABLE
from tests.support.app_process import CHROMIUM_ARGS, ROOT, AppProcess
from tests.support.upstream import Behavior, ScriptedUpstream

BENCH = "bench.stream_bench"
TICKS = os.sysconf("SC_CLK_TCK")
FLOORS = {"route": "bare light-route loop", "litellm": "bare litellm plain loop"}
CHAT = {"path": "/"}  # every answer after the first goes to the same chat
LAST = "zzlast"  # the answer's last word: the upstream notes when it sent it, the page when it showed it
DONE_JS = """before => {
  const all = document.querySelectorAll('.lc-assistant');
  const a = all[all.length - 1];
  if (all.length <= before || a.dataset.status !== 'complete') return false;
  const tails = [...a.querySelectorAll('.lc-stream:not(.lc-meta) > .lc-tail')];
  return tails.every(t => t.textContent === '');
}"""
WATCH_JS = """([marker, before]) => {
  window.__lcSeen = null;
  const look = () => {
    const all = document.querySelectorAll('.lc-assistant');
    const a = all.length > before ? all[all.length - 1] : null;
    if (window.__lcSeen === null && a && a.textContent.includes(marker)) window.__lcSeen = Date.now();
  };
  new MutationObserver(look).observe(document.body, { childList: true, subtree: true, characterData: true });
}"""


@dataclass
class Run:
    bytes: int
    frames: int
    cpu: float
    seconds: float
    dom_ms: float | None = None
    lag_ms: float = 0.0  # the longest time the loop's thread ran while a 5 ms sleep was overdue: a block
    wall_lag_ms: float = 0.0  # the longest overdue wake-up, a busy machine included
    gc_ms: tuple[float, float, float] = (0.0, 0.0, 0.0)  # the longest collection of each generation (LC_GC_FILE)
    gc_full: int = 0  # full (generation-2) collections over 1 ms
    gen2_objects: int = 0  # objects the collector tracks in generation 2 after the last full collection


class Timed:
    """ASGI wrapper around the upstream: the wall time at which a response body piece carried ``LAST``."""

    def __init__(self, app: Any) -> None:
        self.app, self.sent_at = app, 0.0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def timed(message: Any) -> None:
            await send(message)
            if message.get("type") == "http.response.body" and LAST.encode() in message.get("body", b""):
                self.sent_at = time.time()

        await self.app(scope, receive, timed)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def one_paragraph(words: int) -> str:
    return " ".join(f"w{n % 1000:03d}" for n in range(words - 1)) + f" {LAST}"


def code_block(chunks: int) -> str:
    lines = [f"v{n % 1000:03d} = {n % 997}" for n in range(chunks // 3)]
    return "```python\n" + "\n".join(lines) + f"\n# {LAST}\n```"


def measure(app: AppProcess, upstream: ScriptedUpstream, timed: Timed, behavior: Behavior, lag_file: Path) -> Run:
    """One answer in a fresh browser, in the bench's one chat (so the chat list does not grow between runs)."""
    assert app.proc is not None
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page: Page = browser.new_page()
        page.set_default_timeout(600_000)
        frames: list[int] = []
        counting = {"on": False}

        def on_ws(ws: Any) -> None:
            def count(payload: str | bytes) -> None:
                if counting["on"]:
                    frames.append(len(payload))

            ws.on("framereceived", count)

        page.on("websocket", on_ws)
        page.goto(app.url + CHAT["path"])
        page.get_by_label("Message").fill("stream please")
        page.wait_for_timeout(500)
        before = page.locator(".lc-assistant").count()
        page.evaluate(WATCH_JS, [LAST, before])
        upstream.plan(behavior)
        counting["on"], timed.sent_at = True, 0.0
        cpu0, started, wall0 = cpu_seconds(app.proc.pid), time.perf_counter(), time.time()
        page.get_by_role("button", name="Send").click()
        page.wait_for_function(DONE_JS, arg=before, polling=50)
        seconds, cpu = time.perf_counter() - started, cpu_seconds(app.proc.pid) - cpu0
        wall1 = time.time()
        page.wait_for_timeout(300)
        counting["on"] = False
        seen = page.evaluate("window.__lcSeen")
        CHAT["path"] = "/chat/" + page.url.rsplit("/chat/", 1)[-1] if "/chat/" in page.url else CHAT["path"]
        browser.close()
    dom_ms = (seen / 1000 - timed.sent_at) * 1000 if seen and timed.sent_at else None
    rows = [[float(x) for x in row.split()] for row in lag_file.read_text().splitlines()]
    lags = [(lag, min(lag, ran)) for at, lag, ran, *_ in rows if wall0 <= at <= wall1]
    gc_file = lag_file.with_suffix(".gc")
    text = gc_file.read_text() if gc_file.exists() else ""
    numbers = [[float(x) for x in row.split()] for row in text.splitlines()]
    gcs = [(int(gen), ms, int(old)) for at, gen, ms, old in numbers if wall0 <= at <= wall1]
    worst = [max((ms for g, ms, _ in gcs if g == gen), default=0.0) for gen in range(3)]
    return Run(
        sum(frames),
        len(frames),
        cpu,
        seconds,
        dom_ms,
        max((b for _, b in lags), default=0.0),
        max((lag for lag, _ in lags), default=0.0),
        (worst[0], worst[1], worst[2]),
        sum(g == 2 for g, _, _ in gcs),
        max((old for g, _, old in gcs if g == 2), default=0),
    )


def bare(api_base: str, upstream: ScriptedUpstream, behavior: Behavior, kind: str = "litellm") -> float:
    """CPU seconds of a bare loop on the same stream, in its own process: ``litellm`` (``litellm.acompletion(
    stream=True)`` and its stream wrapper, nothing else), ``route`` (the engine's ``open_stream``, the route the app
    takes for this model) or ``httpx`` (httpx + orjson: no litellm at all)."""
    upstream.plan(Behavior(text="warm up", chunk_delay=0), behavior)
    out = subprocess.run(
        [sys.executable, "-m", "bench.stream_bench", "--bare", api_base, "--bare-kind", kind],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_API_KEY": "sk-bench"},
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return float(out.stdout.split()[-1])


def bare_loop(api_base: str, kind: str) -> None:
    import asyncio

    from engine.offline import litellm

    ll = litellm()
    messages = [{"role": "user", "content": "stream please"}]

    async def plain() -> list[str]:
        response = await ll.acompletion(
            model="openai/test-model",
            api_base=api_base,
            messages=messages,
            stream=True,
            stream_options={"include_usage": True},
            max_retries=0,
        )
        parts = []
        async for chunk in response:
            if chunk.choices and chunk.choices[0].delta is not None:
                delta = chunk.choices[0].delta
                parts.append((delta.content or "") + (getattr(delta, "reasoning_content", None) or ""))
        return parts

    async def route() -> list[str]:
        from engine.provider.calls import ProviderConfig
        from engine.provider.routes import open_stream

        config = ProviderConfig(model="openai/test-model", api_base=api_base, api_key="sk-bench")
        stream = await open_stream(config, messages)
        try:
            return [getattr(piece, "text", "") async for piece in stream]
        finally:
            await stream.aclose()

    async def bare_httpx() -> list[str]:
        import httpx
        import orjson

        body = {"model": "test-model", "messages": messages, "stream": True, "stream_options": {"include_usage": True}}
        parts = []
        async with (
            httpx.AsyncClient(timeout=120) as client,
            client.stream("POST", api_base + "/chat/completions", json=body) as response,
        ):
            async for text in response.aiter_lines():
                if text.startswith("data: ") and text != "data: [DONE]":
                    choices = orjson.loads(text[6:]).get("choices")
                    if choices:
                        delta = choices[0].get("delta") or {}
                        parts.append((delta.get("content") or "") + (delta.get("reasoning_content") or ""))
        return parts

    go = {"litellm": plain, "route": route, "httpx": bare_httpx}[kind]
    asyncio.run(go())  # warm-up: the first request builds litellm's clients
    cpu0 = time.process_time()
    asyncio.run(go())
    print(time.process_time() - cpu0)


def verdict(figure: float, target: float) -> str:
    return "PASS" if figure <= target else "MISS"


def line(label: str, figure: str, target: str, ok: str) -> None:
    print(f"  {label:<42} {figure:>22}   target {target:<18} {ok}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bare")
    parser.add_argument("--bare-kind", default="litellm", choices=["litellm", "route", "httpx"])
    parser.add_argument("--per-chunk-only", action="store_true", help="only (c): CPU per chunk by route")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--skip-long", action="store_true")
    parser.add_argument("--skip-table", action="store_true")
    parser.add_argument("--skip-profile", action="store_true")
    parser.add_argument("--chainlit", action="store_true", help="compare with Chainlit (makes a throwaway venv)")
    parser.add_argument("--chainlit-venv", type=Path, help="compare with Chainlit installed in this venv")
    parser.add_argument("--quick", action="store_true", help="5,000 chunks, 3 runs, no profile")
    args = parser.parse_args()
    if args.quick:
        args.chunks, args.runs, args.skip_profile = min(args.chunks, 5000), min(args.runs, 3), True
    if args.bare:
        bare_loop(args.bare, args.bare_kind)
        return
    upstream = ScriptedUpstream()
    timed = Timed(upstream.app)
    upstream.app = timed  # type: ignore[assignment]
    base, stop = serve_in_thread(upstream)
    with tempfile.TemporaryDirectory() as tmp:
        lag_file = Path(tmp) / "lag.txt"
        lag_file.touch()
        per_chunk(Path(tmp), upstream, timed, base, lag_file, args.chunks)
        if args.per_chunk_only:
            stop()
            result.save()
            return
        app = AppProcess(Path(tmp) / "data", base).start()  # no sampler: its wake-ups would count as app CPU
        rival = Rival(base, args.chainlit_venv).start() if args.chainlit or args.chainlit_venv else None
        plain_app = None
        if rival is not None:  # Chainlit's client floor is litellm's plain route: the app on that route too
            os.environ[ROUTE_VARIABLE] = "litellm"
            plain_app = AppProcess(Path(tmp) / "data-plain", base).start()
            del os.environ[ROUTE_VARIABLE]
        try:
            if not args.skip_table:
                table(app, upstream, timed, base, lag_file, args.runs, rival, plain_app)
        finally:
            app.stop()
            if rival is not None:
                rival.stop()
            if plain_app is not None:
                plain_app.stop()
        if not args.skip_long:
            os.environ["LC_LOOP_LAG_FILE"] = str(lag_file)
            os.environ["LC_GC_FILE"] = str(lag_file.with_suffix(".gc"))
            CHAT["path"] = "/"
            app = AppProcess(Path(tmp) / "data-long", base).start()
            try:
                long_answers(app, upstream, timed, base, lag_file, args.chunks)
            finally:
                app.stop()
                del os.environ["LC_LOOP_LAG_FILE"], os.environ["LC_GC_FILE"]
        if not args.skip_long and not args.skip_profile:
            profiled(Path(tmp), upstream, timed, base, args.chunks)
    stop()
    result.save()


def per_chunk(tmp: Path, upstream: ScriptedUpstream, timed: Timed, base: str, lag: Path, chunks: int) -> None:
    """(c) CPU per chunk by route, one paragraph as fast as the upstream sends and one paced 5 ms apart (each chunk
    its own read, as in a real stream): the app's whole process on the light route (the default) and on litellm's
    plain route (``LEDGER_CHAT_STREAM_ROUTE=litellm``), and three bare loops (the engine's route alone, litellm's
    plain ``acompletion(stream=True)`` loop, httpx + orjson), each in its own process, all in this run."""
    paced = max(200, chunks // 20)
    cases = {
        f"{chunks} chunks, as fast as sent": (chunks, lambda: Behavior(text=one_paragraph(chunks), chunk_delay=0)),
        f"{paced} chunks, 5 ms apart": (paced, lambda: Behavior(text=one_paragraph(paced), chunk_delay=0.005)),
    }
    print(f"(c) CPU per chunk by route ({os.cpu_count()} cores; µs of CPU per chunk; x: / the bare httpx loop):")
    for label, (count, make) in cases.items():
        figures: dict[str, float] = {}
        for route in ("auto", "litellm"):
            os.environ[ROUTE_VARIABLE] = route
            CHAT["path"] = "/"
            app = AppProcess(tmp / f"data-{route}-{count}", base).start()
            try:
                measure(app, upstream, timed, Behavior(text=f"ok {LAST}", chunk_delay=0), lag)  # warm-up
                figures[f"app, {'light' if route == 'auto' else 'plain litellm'} route"] = measure(
                    app, upstream, timed, make(), lag
                ).cpu
            finally:
                app.stop()
                del os.environ[ROUTE_VARIABLE]
        figures["bare loop: the engine's light route"] = bare(base, upstream, make(), "route")
        figures["bare loop: litellm.acompletion(stream=True)"] = bare(base, upstream, make(), "litellm")
        figures["bare loop: httpx + orjson"] = bare(base, upstream, make(), "httpx")
        floor = figures["bare loop: httpx + orjson"]
        print(f"  {label}:")
        for name, cpu in figures.items():
            us = cpu / count * 1e6
            target = name == "app, light route" and count == chunks  # at a pace every bare loop pays its wake-ups
            ok = verdict(us, 150) if target else ""
            line(name, f"{us:.0f} µs, {cpu / floor:.1f}x", "<= 150 µs" if target else "-", ok)
        per = {name: cpu / count * 1e6 for name, cpu in figures.items()}
        bare_light = per["bare loop: the engine's light route"]
        bare_plain = per["bare loop: litellm.acompletion(stream=True)"]
        for app_side, same, other in (
            ("app, light route", ("bare loop: the engine's light route", bare_light), bare_plain),
            ("app, plain litellm route", ("bare loop: litellm.acompletion(stream=True)", bare_plain), bare_light),
        ):
            us = per[app_side]
            result.row(
                BENCH,
                f"CPU per chunk, {label}: {app_side} (the whole app process: engine, ledger, store, the page in "
                "Chromium)",
                f"{us:.0f} µs per chunk",
                f"{same[0]} (same route): {same[1]:.0f} µs ({us / same[1]:.1f}x); "
                f"{'litellm plain loop' if app_side.endswith('light route') else 'light-route loop'}: "
                f"{other:.0f} µs ({us / other:.2f}x); httpx + orjson: {per['bare loop: httpx + orjson']:.0f} µs",
            )


def table(
    app: AppProcess,
    upstream: ScriptedUpstream,
    timed: Timed,
    base: str,
    lag: Path,
    runs: int,
    rival: Rival | None,
    plain_app: AppProcess | None = None,
) -> None:
    make: Callable[[], Behavior] = lambda: Behavior(text=one_paragraph(500), chunk_delay=0.01)  # noqa: E731
    measure(app, upstream, timed, make(), lag)  # warm-up (first page, first render)
    if rival is not None and plain_app is not None:
        rival.measure(upstream, timed, make(), LAST, cpu_seconds)
        measure(plain_app, upstream, timed, make(), lag)
    ours: list[Run] = []
    floors: dict[str, list[float]] = {kind: [] for kind in FLOORS}
    theirs: list[RivalRun] = []
    ours_plain: list[Run] = []
    sides: list[Callable[[], None]] = [lambda: ours.append(measure(app, upstream, timed, make(), lag))]

    def floor_side(kind: str) -> Callable[[], None]:
        return lambda: floors[kind].append(bare(base, upstream, make(), kind))

    sides += [floor_side(kind) for kind in FLOORS]
    if rival is not None and plain_app is not None:
        sides.append(lambda: theirs.append(rival.measure(upstream, timed, make(), LAST, cpu_seconds)))
        sides.append(lambda: ours_plain.append(measure(plain_app, upstream, timed, make(), lag)))
    for n in range(runs):  # each run measures every side back to back, in an order that turns from run to run
        for side in sides[n % len(sides) :] + sides[: n % len(sides)]:
            side()
    kb = statistics.median(r.bytes for r in ours) / 1024
    cpu = statistics.median(r.cpu for r in ours)
    dom = statistics.median(r.dom_ms or 0.0 for r in ours)
    frames = statistics.median(r.frames for r in ours)
    print(f"(a) one-paragraph 500-token answer, 10 ms apart, medians of {runs} ({os.cpu_count()} cores):")
    line("websocket payload, Send -> complete", f"{kb:.1f} KB", "<= 30 KB", verdict(kb, 30))
    ratios = {kind: paired([r.cpu for r in ours], floors[kind]) for kind in FLOORS}
    line("app CPU per answer / bare light-route loop", f"{ratios['route']:.2f}x", "-", "")
    line("app CPU per answer / bare litellm plain loop", f"{ratios['litellm']:.2f}x", "<= 1.25x", "")
    line("last token -> DOM", f"{dom:.0f} ms", "<= 60 ms", verdict(dom, 60))
    print(
        f"  (messages: {frames:.0f}; CPU of each run: app {[round(r.cpu, 3) for r in ours]} s, "
        + ", ".join(f"{FLOORS[k]} {[round(f, 3) for f in floors[k]]} s" for k in FLOORS)
        + ")"
    )
    what = f"one 500-token paragraph, 10 ms apart, Send -> complete in Chromium, app on the light route ({runs} runs)"
    result.row(BENCH, what + ": websocket payload", f"{kb:.1f} KB in {frames:.0f} messages")
    result.row(BENCH, what + ": last token -> DOM", f"{dom:.0f} ms (median)")
    floor_cpu = {k: statistics.median(floors[k]) for k in FLOORS}
    result.row(
        BENCH,
        what + ": app CPU per answer",
        f"{cpu * 1000:.0f} ms",
        f"bare light-route loop (same route): {floor_cpu['route'] * 1000:.0f} ms, {ratios['route']:.2f}x; "
        f"bare litellm plain loop: {floor_cpu['litellm'] * 1000:.0f} ms, {ratios['litellm']:.2f}x "
        "(medians of each run's ratio)",
    )
    if theirs:
        rival_cpu = statistics.median(r.cpu for r in theirs)
        plain_cpu = statistics.median(r.cpu for r in ours_plain)
        same_floor = paired([r.cpu for r in ours_plain], [r.cpu for r in theirs])
        light_vs = paired([r.cpu for r in ours], [r.cpu for r in theirs])
        line("app (plain route) CPU / Chainlit's", f"{same_floor:.2f}x", "<= 1.00x", verdict(same_floor, 1.0))
        line("app (light route) CPU / Chainlit's", f"{light_vs:.2f}x", "-", "")
        rival_dom = statistics.median(r.dom_ms or 0.0 for r in theirs)
        rival_kb = statistics.median(r.bytes for r in theirs) / 1024
        print(
            f"  (Chainlit, same stream: CPU {paired([r.cpu for r in theirs], floors['litellm']):.2f}x the bare litellm "
            f"plain loop, websocket {rival_kb:.1f} KB, last token -> DOM {rival_dom:.0f} ms; CPU of each run "
            f"{[round(r.cpu, 3) for r in theirs]} s)"
        )
        result.row(
            BENCH,
            what.replace("app on the light route", "app on litellm's plain route")
            + ": app CPU per answer against Chainlit 2 on the same client floor (litellm's plain route, same "
            "litellm version)",
            f"{plain_cpu * 1000:.0f} ms",
            f"Chainlit: {rival_cpu * 1000:.0f} ms, {same_floor:.2f}x; the app on its light route {light_vs:.2f}x "
            f"Chainlit's (different floors); Chainlit {rival_kb:.1f} KB, last token -> DOM {rival_dom:.0f} ms",
        )


def paired(ours: list[float], theirs: list[float]) -> float:
    """The median of the runs' ratios, each run's sides measured back to back: this machine's speed drifts by tens
    of percent within a minute, and a ratio of two sides' medians would mix runs at different speeds."""
    return statistics.median(a / b for a, b in zip(ours, theirs, strict=True))


def long_answers(app: AppProcess, upstream: ScriptedUpstream, timed: Timed, base: str, lag: Path, chunks: int) -> None:
    tiny = measure(app, upstream, timed, Behavior(text=f"ok {LAST}", chunk_delay=0), lag)
    fixed = tiny.bytes
    print(
        f"(b) {chunks} chunks of ~5 characters, as fast as the upstream sends (fixed overhead: a one-word answer "
        f"costs {fixed / 1024:.1f} KB):"
    )
    kinds = {
        "one paragraph": (lambda: Behavior(text=one_paragraph(chunks), chunk_delay=0), one_paragraph(chunks)),
        "one code block": (lambda: Behavior(text=code_block(chunks), chunk_delay=0), code_block(chunks)),
        "reasoning": (
            lambda: Behavior(
                reasoning=one_paragraph(chunks).replace(LAST, "thought"), text=f"done {LAST}", chunk_delay=0
            ),
            one_paragraph(chunks),
        ),
    }
    for kind, (make, text) in kinds.items():
        run = measure(app, upstream, timed, make(), lag)
        floors = {k: bare(base, upstream, make(), k) for k in FLOORS}
        size = len(text.encode())
        print(f"  {kind}: {size / 1024:.0f} KB of text in {run.seconds:.1f} s")
        for k, floor in floors.items():
            line(f"app CPU / {FLOORS[k]}", f"{run.cpu:.2f} s / {floor:.2f} s = {run.cpu / floor:.2f}x", "-", "")
        ratio = (run.bytes - fixed) / size
        line(
            "bytes to the browser (less fixed) / answer",
            f"{run.bytes / 1024:.0f} KB, {ratio:.2f}x",
            "<= 1.5x",
            verdict(ratio, 1.5),
        )
        line("longest event-loop block (loop thread ran)", f"{run.lag_ms:.0f} ms", "<= 20 ms", verdict(run.lag_ms, 20))
        print(f"  (longest late wake-up, a busy machine included: {run.wall_lag_ms:.0f} ms)")
        print(
            f"  (longest garbage collection of generation 0/1/2: {' / '.join(f'{ms:.0f}' for ms in run.gc_ms)} ms; "
            f"{run.gc_full} full ones over 1 ms; {run.gen2_objects:,} objects in generation 2 at most)"
        )
        what = f"{chunks} chunks of ~5 characters as fast as the upstream sends, {kind}, app on the light route"
        result.row(
            BENCH,
            what + ": app CPU",
            f"{run.cpu:.2f} s",
            f"bare light-route loop (same route): {floors['route']:.2f} s, {run.cpu / floors['route']:.2f}x; "
            f"bare litellm plain loop: {floors['litellm']:.2f} s, {run.cpu / floors['litellm']:.2f}x",
        )
        result.row(
            BENCH,
            what + ": bytes to the browser, less a one-word answer's",
            f"{ratio:.2f}x the text ({size / 1024:.0f} KB)",
            f"a one-word answer in the same run: {fixed / 1024:.1f} KB",
        )
        result.row(BENCH, what + ": longest event-loop block", f"{run.lag_ms:.0f} ms")


def profiled(tmp: Path, upstream: ScriptedUpstream, timed: Timed, base: str, chunks: int) -> None:
    """One more 20,000-chunk paragraph with the app's loop thread under cProfile: what share is the reducer."""
    stats_file = tmp / "app.prof"
    lag_file = tmp / "lag2.txt"
    lag_file.touch()
    os.environ["LC_PROFILE_FILE"] = str(stats_file)
    CHAT["path"] = "/"
    app = AppProcess(tmp / "data2", base).start()
    try:
        measure(app, upstream, timed, Behavior(text=one_paragraph(chunks), chunk_delay=0), lag_file)
    finally:
        app.stop()
        del os.environ["LC_PROFILE_FILE"]
    stats = pstats.Stats(str(stats_file))
    table: dict[Any, Any] = stats.stats
    total = sum(row[2] for row in table.values())
    by_file: dict[str, float] = {}
    for (filename, _, _), row in table.items():
        inside = filename.startswith(str(ROOT)) and "/.venv/" not in filename
        key = filename.replace(str(ROOT) + "/", "") if inside else "(libraries: litellm, NiceGUI, ...)"
        by_file[key] = by_file.get(key, 0.0) + row[2]
    reducer = by_file.get("ledger/reducer.py", 0.0)
    print(f"(b) profiled one-paragraph run, the app's loop thread under cProfile (CPU time): {total:.1f} s")
    print(f"  ledger/reducer.py: {reducer:.2f} s = {100 * reducer / total:.1f}% of it")
    for name, seconds in sorted(by_file.items(), key=lambda kv: -kv[1])[:8]:
        print(f"  {name:<40} {seconds:6.2f} s  {100 * seconds / total:5.1f}%")


if __name__ == "__main__":
    main()
