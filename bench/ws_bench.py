"""Websocket traffic of one streamed answer, ours vs the naive per-chunk update (not a test).

    .venv/bin/python -m bench.ws_bench

A 500-token answer streamed by the test upstream (10 ms apart), shown in headless Chromium by
(a) the real app and (b) ``bench/naive_app.py``, which calls ``set_content(accumulated)`` on every chunk.
Counts websocket frames and bytes the browser received from Send until the answer is complete. The rows are also
recorded for ``bench.report`` (``bench.result``).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from bench import result
from demo.server.endpoint import serve_in_thread
from tests.support.app_process import CHROMIUM_ARGS, AppProcess
from tests.support.upstream import Behavior, ScriptedUpstream

TOKENS = 500
PARAGRAPHS = 8


def answer_text() -> str:
    words = [f"word{n}" for n in range(TOKENS)]
    size = TOKENS // PARAGRAPHS
    return "\n\n".join(" ".join(words[i : i + size]) for i in range(0, TOKENS, size))


def measure(url: str, done_selector: str, upstream: ScriptedUpstream, delay: float) -> tuple[int, int, float]:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page()
        frames: list[int] = []
        counting = {"on": False}

        def on_ws(ws) -> None:
            def count(payload) -> None:
                if counting["on"]:
                    frames.append(len(payload))

            ws.on("framereceived", count)

        page.on("websocket", on_ws)
        page.goto(url)
        page.get_by_label("Message").fill("stream please")
        page.wait_for_timeout(500)
        upstream.plan(Behavior(text=answer_text(), chunk_delay=delay))
        counting["on"] = True
        started = time.perf_counter()
        page.get_by_role("button", name="Send").click()
        page.wait_for_selector(done_selector, timeout=60_000)
        elapsed = time.perf_counter() - started
        page.wait_for_timeout(300)
        counting["on"] = False
        browser.close()
    return len(frames), sum(frames), elapsed


def main() -> None:
    upstream = ScriptedUpstream()
    base, stop = serve_in_thread(upstream)
    with tempfile.TemporaryDirectory() as tmp:
        ours = AppProcess(Path(tmp) / "data", base).start()
        naive = AppProcess(Path(tmp) / "naive", base, module="bench.naive_app").start()
        try:
            for delay, label in ((0.01, "10 ms apart"), (1 / 30, "human pace, 30 chunks/s")):
                o = measure(ours.url, "[data-status=complete]", upstream, delay)
                n = measure(naive.url, "text=complete", upstream, delay)
                print(f"500-token answer, {label}:")
                print(f"  Ledger Chat: {o[0]:4d} websocket messages, {o[1] / 1024:7.1f} KB ({o[2]:.1f} s)")
                print(f"  naive set_content per chunk: {n[0]:4d} messages, {n[1] / 1024:7.1f} KB ({n[2]:.1f} s)")
                print(f"  ratio: {n[1] / o[1]:.1f}x fewer bytes, {n[0] / max(o[0], 1):.1f}x fewer messages")
                result.row(
                    "bench.ws_bench",
                    f"websocket traffic of a 500-token answer in 8 paragraphs, {label}, Send -> complete in Chromium",
                    f"{o[0]} messages, {o[1] / 1024:.1f} KB",
                    f"naive set_content per chunk (bench.naive_app): {n[0]} messages, {n[1] / 1024:.1f} KB",
                )
        finally:
            ours.stop()
            naive.stop()
    stop()
    result.save()


if __name__ == "__main__":
    main()
