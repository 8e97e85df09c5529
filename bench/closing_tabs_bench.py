"""Closing many tabs while an answer streams (not a test): does the stream stall while the app frees their pages?

    .venv/bin/python -m bench.closing_tabs_bench [--tabs 20] [--chunks 3000]

The real app (``main.py``, its loop sampled through ``LC_LOOP_LAG_FILE``, its garbage collections through
``LC_GC_FILE``) on the test upstream, in headless Chromium: ``--tabs`` tabs are opened and left idle, one more tab
sends a message whose answer streams ``--chunks`` chunks 4 ms apart, and the idle tabs are closed right after the
answer started. NiceGUI drops their pages 3 s later and the app then collects their objects with a full garbage
collection, which holds the event loop. Prints the longest event-loop block while the answer streamed (target
<= 20 ms, as for long answers) and the full collections over 1 ms during the stream and after it.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from playwright.sync_api import expect, sync_playwright

from demo.server.endpoint import serve_in_thread
from tests.support.app_process import CHROMIUM_ARGS, AppProcess
from tests.support.upstream import Behavior, ScriptedUpstream

AFTER_SECONDS = 8.0  # how long after the answer the collections are still counted: NiceGUI's 3 s + the 5 s check


def rows(path: Path) -> list[list[float]]:
    return [[float(x) for x in line.split()] for line in path.read_text().splitlines()] if path.exists() else []


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tabs", type=int, default=20)
    parser.add_argument("--chunks", type=int, default=3000)
    args = parser.parse_args()
    upstream = ScriptedUpstream()
    base, stop = serve_in_thread(upstream)
    with tempfile.TemporaryDirectory() as tmp:
        lag, gcs = Path(tmp) / "lag.txt", Path(tmp) / "lag.gc"
        os.environ.update(LC_LOOP_LAG_FILE=str(lag), LC_GC_FILE=str(gcs))
        app = AppProcess(Path(tmp) / "data", base).start()
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
                streaming = browser.new_page()
                streaming.goto(app.url + "/")
                idle = browser.new_context()
                for _ in range(args.tabs):
                    tab = idle.new_page()
                    tab.goto(app.url + "/")
                    expect(tab.get_by_label("Message")).to_be_visible()
                upstream.plan(Behavior(text=" ".join(f"w{n}" for n in range(args.chunks)), chunk_delay=0.004))
                streaming.wait_for_function("() => window.did_handshake === true")
                streaming.get_by_label("Message").fill("stream please")
                streaming.get_by_label("Message").press("Enter")
                streaming.wait_for_selector(".lc-assistant[data-status=streaming]")
                started = time.time()
                idle.close()
                streaming.wait_for_selector(".lc-assistant[data-status=complete]", timeout=600_000)
                ended = time.time()
                time.sleep(AFTER_SECONDS)  # the measuring window for the collections after the answer
                browser.close()
        finally:
            app.stop()
        blocks = [ran for at, _, ran, *_ in rows(lag) if started <= at <= ended]
        full = [(at, ms) for at, gen, ms, _ in rows(gcs) if gen == 2]
    stop()
    during = [round(ms) for at, ms in full if started <= at <= ended]
    after = [round(ms) for at, ms in full if at > ended]
    worst = max(blocks, default=0.0)
    print(f"{args.tabs} idle tabs closed while a {args.chunks}-chunk answer streamed ({ended - started:.1f} s):")
    print(
        f"  longest event-loop block while it streamed  {worst:.0f} ms   target <= 20 ms   "
        f"{'PASS' if worst <= 20 else 'MISS'}"
    )
    print(f"  full collections over 1 ms: during the stream {during} ms, in the {AFTER_SECONDS:.0f} s after {after} ms")


if __name__ == "__main__":
    main()
