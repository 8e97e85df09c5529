"""Many streams as a deployment sees them, this tree against the code before, alternating in one run (not a test).

    nice -n 10 .venv/bin/python -m bench.many_streams_bench [--pairs 2] [--streams 100] [--watchers 20]
        [--rate 30] [--seconds 10] [--before REV] [--profile]

One upstream process (``bench.stream_upstream``: ``--rate`` chunks a second per stream, one word per chunk, each
word naming its stream and number) and one headless Chromium serve every run; each run
(``bench.many_streams_run``) starts the app (``bench.many_streams_app``) from one checkout, streams into
``--streams`` conversations, with ``--watchers`` socket watchers (``bench.watchers``: socket.io clients that open
a chat as a tab does and get every update, without rendering) and one real tab for chunk -> DOM. The runs take
turns: this tree and ``--before`` (default: the code before issue 39, the parent of the first commit of
``store/tinydb/logfile.py``, extracted with ``git archive``; this tree's ``bench.many_streams_app`` is copied
into it so both are driven alike), ``--pairs`` times, the first side swapping
each pair, after a short run that is not counted (the first start is cold). Figures per side, every run's samples
together (issue 39's targets beside them):
- the app's CPU per chunk: the app process's CPU (``/proc``) over the window / the chunks the upstream sent in it
  (<= 120 µs);
- the engine's lag behind the upstream: upstream sent a word -> the ledger's ``chunk`` stamp, every word of every
  stream sent in the window (p95 <= 50 ms);
- chunk -> DOM in the tab (a MutationObserver's stamp; p95 <= 250 ms) and, beside it, chunk -> watcher;
- Stop in every conversation at once, right after the window: Stop -> the app's ``upstream_closed`` in the ledger
  (p95 <= 100 ms) and Stop -> the upstream seeing the stream close (p95 <= 300 ms);
- the CPU of the upstream, the watchers and Chromium, and the load average (2 cores: they decide the rest).
Each run also shows the tab's and its conversation's watcher's socket.io messages and bytes (a watcher that
received nothing would measure nothing). ``--profile`` adds one more run per side, not counted (the profiler
slows the loop), with the event loop's thread under cProfile (CPU time) in the window and in the Stop, and prints
where that thread's CPU went in each. Rows are recorded for ``bench.report`` (``bench.result``).
"""

from __future__ import annotations

import argparse
import os
import pstats
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from bench import result
from bench.live_tail_bench import extract
from bench.many_streams_run import Figures, pct, run
from bench.stream_upstream import UpstreamProcess
from tests.support.app_process import CHROMIUM_ARGS, ROOT

BENCH = "bench.many_streams_bench"
COPIED = ("bench/many_streams_app.py",)


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def before_issue_39() -> str:
    first = git("log", "--format=%H", "--reverse", "--", "store/tinydb/logfile.py").splitlines()[0]
    return git("rev-parse", "--short", f"{first}^")


def checkout(rev: str, into: Path) -> Path:
    root = extract(rev, into)
    for name in COPIED:
        shutil.copyfile(ROOT / name, root / name)
    return root


def pooled(runs: list[Figures], name: str) -> list[float]:
    return [value for f in runs for value in getattr(f, name)]


def cpu(runs: list[Figures]) -> float:
    return sum(f.app_cpu for f in runs) / max(sum(f.words_sent for f in runs), 1) * 1e6


def mean(runs: list[Figures], name: str) -> float:
    return float(sum(getattr(f, name) for f in runs)) / max(len(runs), 1)


FIGURES = (  # label, figure of a side's runs, target (None: shown for context)
    ("app CPU per chunk (µs)", cpu, 120.0),
    ("engine lag p50 (ms)", lambda r: pct(pooled(r, "engine_ms"), 0.5), None),
    ("engine lag p95 (ms)", lambda r: pct(pooled(r, "engine_ms"), 0.95), 50.0),
    ("chunk -> DOM p50 (ms)", lambda r: pct(pooled(r, "dom_ms"), 0.5), None),
    ("chunk -> DOM p95 (ms)", lambda r: pct(pooled(r, "dom_ms"), 0.95), 250.0),
    ("chunk -> watcher p50 (ms)", lambda r: pct(pooled(r, "watcher_ms"), 0.5), None),
    ("chunk -> watcher p95 (ms)", lambda r: pct(pooled(r, "watcher_ms"), 0.95), None),
    ("Stop: app's closes p50 (ms)", lambda r: pct(pooled(r, "app_closed_ms"), 0.5), None),
    ("Stop: app's closes p95 (ms)", lambda r: pct(pooled(r, "app_closed_ms"), 0.95), 100.0),
    ("Stop: upstream's view p50 (ms)", lambda r: pct(pooled(r, "upstream_ms"), 0.5), None),
    ("Stop: upstream's view p95 (ms)", lambda r: pct(pooled(r, "upstream_ms"), 0.95), 300.0),
    ("chunks sent a second, all streams", lambda r: sum(f.words_sent for f in r) / sum(f.seconds for f in r), None),
    ("event loop's longest block (ms)", lambda r: max(f.block_ms for f in r), None),
    (
        "of which the event loop's thread (µs)",
        lambda r: sum(f.loop_cpu for f in r) / max(sum(f.words_sent for f in r), 1) * 1e6,
        None,
    ),
    ("app CPU (% of a core)", lambda r: sum(f.app_cpu for f in r) / sum(f.seconds for f in r) * 100, None),
    ("upstream CPU (% of a core)", lambda r: mean(r, "upstream_pct"), None),
    ("watchers' CPU (% of a core)", lambda r: mean(r, "watchers_pct"), None),
    ("Chromium CPU (% of a core)", lambda r: mean(r, "browser_pct"), None),
    ("load average (1 min)", lambda r: mean(r, "load"), None),
)


def each(label: str, f: Figures) -> None:
    print(
        f"  {label:<10} {f.us_per_chunk:6.0f} µs/chunk  engine p95 {pct(f.engine_ms, 0.95):5.0f}  DOM p95 "
        f"{pct(f.dom_ms, 0.95):5.0f}  watcher p95 {pct(f.watcher_ms, 0.95):5.0f}  closes p95 "
        f"{pct(f.app_closed_ms, 0.95):5.0f}  upstream p95 {pct(f.upstream_ms, 0.95):5.0f}  load {f.load:4.1f}  "
        f"tab {f.tab[0]} msgs/{f.tab[1] / 1000:.0f} KB, its watcher {f.twin[0]}/{f.twin[1] / 1000:.0f} KB, "
        f"{len(f.dom_ms)} words in the DOM, {len(f.watcher_ms)} at watchers (without a word: {f.watched[2]}), "
        f"unclosed {f.unclosed}, reloads {f.reloads}, watcher disconnects {f.disconnects}",
        flush=True,
    )


def short(path: str) -> str:
    for marker in ("site-packages/", "/lib/python3.11/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return "/".join(path.rsplit("/", 2)[-2:])


def show_profile(side: str, phase: str, path: Path) -> None:
    """Where the event loop's thread spent its CPU in a profiled run (cProfile's cumulative and own time)."""
    stats: Any = pstats.Stats(str(path))
    total = stats.total_tt
    rows = [(f"{short(f)}:{name}", tt, ct) for (f, _, name), (_, _, tt, ct, _) in stats.stats.items()]
    print(f"  profile, {side}, {phase}: the event loop's thread under cProfile, CPU time {total:.2f} s (a run of its "
          "own, not counted above)")  # fmt: skip
    inclusive = [r for r in sorted(rows, key=lambda r: -r[2]) if r[2] < 0.9 * total][:26]
    print("    cumulative: " + "; ".join(f"{w} {ct / total:.0%}" for w, _, ct in inclusive))
    print("    own: " + "; ".join(f"{w} {tt / total:.0%}" for w, tt, _ in sorted(rows, key=lambda r: -r[1])[:16]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--watchers", type=int, default=20)
    parser.add_argument("--rate", type=float, default=30.0)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--before", help="the code to compare with (default: the parent of issue 39's first commit)")
    parser.add_argument("--profile", action="store_true", help="sample the app's stacks in each window")
    args = parser.parse_args()
    before = args.before or before_issue_39()
    here = git("rev-parse", "--short", "HEAD")
    words = int(args.rate * (args.seconds + 60))  # every stream still runs when Stop is pressed
    print(f"many streams: {args.streams} conversations at {args.rate:g} chunks/s, {args.watchers} socket watchers, "
          f"1 Chromium tab, {args.seconds:g} s windows, {args.pairs} pairs, {os.cpu_count()} cores; this tree "
          f"({here}) against {before}", flush=True)  # fmt: skip
    sides: dict[str, list[Figures]] = {"this tree": [], "before": []}
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        roots = {"this tree": ROOT, "before": checkout(before, Path(tmp) / "before")}
        upstream = UpstreamProcess(args.rate, words, Path(tmp) / "upstream.log")
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        try:  # a short run first, not counted: the first app and tab of a run start cold (the page cache, Chromium)
            run(browser, upstream, Path(tmp), 10, 2, 2.0, "a", roots["before"])
            for n in range(args.pairs):
                for side in list(sides) if n % 2 == 0 else list(sides)[::-1]:
                    tag = "bcdefghijklmnopqrstuvwxy"[2 * n + (side == "before")]
                    got = run(browser, upstream, Path(tmp), args.streams, args.watchers, args.seconds, tag,
                              roots[side])  # fmt: skip
                    sides[side].append(got)
                    each(f"{side[:6]} #{n + 1}", got)
            for n, side in enumerate(sides if args.profile else ()):
                profiled = Path(tmp) / f"profile-{n}.pstats"
                run(browser, upstream, Path(tmp), args.streams, args.watchers, args.seconds, "yz"[n], roots[side],
                    profiled)  # fmt: skip
                show_profile(side, "the window", Path(f"{profiled}-window"))
                show_profile(side, "the Stop", Path(f"{profiled}-stop"))
        finally:
            browser.close()
            upstream.stop()
    print(f"  load average {load0:.1f} -> {os.getloadavg()[0]:.1f}")
    print(f"  {'':<34}{'this tree':>12}{'before':>12}   target")
    for label, figure, target in FIGURES:
        mine, theirs = figure(sides["this tree"]), figure(sides["before"])
        verdict = "" if target is None else f"<= {target:g}  " + ("PASS" if mine <= target else "MISS")
        print(f"  {label:<34}{mine:>12.1f}{theirs:>12.1f}   {verdict}")
        if target is not None:
            what = f"{args.streams} streams at {args.rate:g} chunks/s, {args.watchers} socket watchers, 1 tab: {label}"
            sent = [sum(f.words_sent for f in r) / sum(f.seconds for f in r) for r in sides.values()]
            compared = (
                f"{before} (the code before): {theirs:.0f} ({args.pairs} runs each, taking turns; the upstream sent "
                f"{sent[0]:,.0f} and {sent[1]:,.0f} chunks/s of the {args.streams * args.rate:,.0f} asked)"
            )
            result.row(BENCH, what, f"{mine:.0f} (target <= {target:g})", compared)
    result.save()


if __name__ == "__main__":
    main()
