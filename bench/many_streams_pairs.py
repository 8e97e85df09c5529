"""Many streams, this code against an older checkout, run alternately in one run (not a test).

    git archive REV | tar -x -C /tmp/base && ln -s "$PWD/.venv" /tmp/base/.venv
    nice -n 10 .venv/bin/python -m bench.many_streams_pairs --base-root /tmp/base [--pairs 3] [--streams 100]
        [--watched 20] [--rate 30] [--seconds 8]

On a machine shared with other work the figures of one run move with the load more than with the code, so this
runs ``bench.many_streams_bench.run`` for the code in ``--base-root`` ("before") and for this checkout ("after")
in pairs, alternating which goes first, with the same upstream process and the same Chromium, and prints each
pair's figures beside the load average; then the single-stream baseline (this checkout, 1 stream in 1 tab) of the
same run. Read the pairs, not one figure.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from bench.many_streams_bench import Figures, UpstreamProcess, pct, run
from tests.support.app_process import CHROMIUM_ARGS, ROOT

WINDOW: list[float] = [8.0]  # the window's seconds (the app's CPU per chunk: its CPU in the window / words sent)
COLUMNS = (
    ("DOM p50", lambda f: f"{pct(f.dom_ms, 0.5):.0f}"),
    ("DOM p95", lambda f: f"{pct(f.dom_ms, 0.95):.0f}"),
    ("Stop med", lambda f: f"{pct(f.stop_ms, 0.5):.0f}"),
    ("Stop p95", lambda f: f"{pct(f.stop_ms, 0.95):.0f}"),
    ("handler", lambda f: f"{f.stop_began_ms:.0f}"),
    ("app closed", lambda f: f"{pct(f.app_closed_ms, 0.5):.0f}"),
    ("block", lambda f: f"{f.block_ms:.0f}"),
    ("late", lambda f: f"{f.late_ms:.0f}"),
    ("app %", lambda f: f"{f.cpu_pct_per_stream * f.streams:.0f}"),
    ("%/stream", lambda f: f"{f.cpu_pct_per_stream:.2f}"),
    ("µs/chunk", lambda f: f"{f.cpu_pct_per_stream * f.streams / 100 * WINDOW[0] / max(f.words_sent, 1) * 1e6:.0f}"),
    ("Chromium %", lambda f: f"{f.browser_pct:.0f}"),
    ("words seen", lambda f: f"{len(f.dom_ms)}"),
    ("load", lambda f: f"{f.load:.1f}"),
)


def row(label: str, figures: Figures) -> None:
    print(f"  {label:<14}" + "".join(f"{get(figures):>11}" for _, get in COLUMNS), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-root", type=Path, required=True)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--watched", type=int, default=20)
    parser.add_argument("--rate", type=float, default=30.0)
    parser.add_argument("--seconds", type=float, default=8.0)
    args = parser.parse_args()
    words = int(args.rate * (args.seconds + 60))
    WINDOW[0] = args.seconds
    print(
        f"many streams, pairs: {args.streams} conversations at {args.rate:g} chunks/s, {args.watched} watched in "
        f"Chromium tabs, {args.seconds:g} s window, {os.cpu_count()} cores; before = {args.base_root}, after = "
        f"{ROOT} (ms unless said; 'handler': Stop request -> the app's handler runs; 'app closed': Stop -> the app "
        f"closed the stream, median; 'block'/'late': the event loop's longest block / late wake-up)"
    )
    print(f"  {'':<14}" + "".join(f"{name:>11}" for name, _ in COLUMNS))
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        upstream = UpstreamProcess(args.rate, words, Path(tmp) / "upstream.log")
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        try:
            row("1 stream", run(browser, upstream, Path(tmp), 1, 1, args.seconds, "s"))
            for n in range(args.pairs):
                sides = [("before", args.base_root), ("after", ROOT)]
                for name, root in sides if n % 2 == 0 else sides[::-1]:
                    tag = f"{'bcdefghijklmnopqrstuvwxy'[2 * n + (name == 'after')]}"
                    many = run(browser, upstream, Path(tmp), args.streams, args.watched, args.seconds, tag, root)
                    row(f"{name} #{n + 1}", many)
        finally:
            browser.close()
            upstream.stop()


if __name__ == "__main__":
    main()
