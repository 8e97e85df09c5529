"""Live markdown of the growing tail (issue 25), measured against the code before it, in one run (not a test).

    .venv/bin/python -m bench.live_tail_bench [--runs 3] [--chunks 20000] [--skip-short] [--base REV ...]

App processes on the same scripted upstream: this tree, and each ``--base`` (repeatable; default: the parent of
the first "live markdown:" commit, the plain-text tail), extracted with ``git archive`` into a temporary
directory. Each answer is streamed into headless Chromium (``bench.stream_bench.measure``: websocket payload
received from Send to complete, app CPU, the longest event-loop block); the apps alternate run by run, and
medians are shown, with this tree's ratios to each base.
(a) the issue's table stream: a 500-token answer as one paragraph, 10 ms apart; (b) the 500-token answer of
``bench.ws_bench`` (8 paragraphs); (c) the same one-paragraph answer with markup in every sentence (bold, code, a
link): what rendering the tail costs when it has something to render; (d) ``--chunks`` chunks of ~5 characters
as fast as the upstream sends, as one paragraph, one code block, one table and one list, with the bare litellm
loop's CPU.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

import tests.support.app_process as app_process
from bench.stream_bench import CHAT, LAST, Run, Timed, bare, code_block, measure, one_paragraph
from bench.ws_bench import answer_text
from demo.server.endpoint import serve_in_thread
from tests.support.app_process import ROOT, AppProcess
from tests.support.upstream import Behavior, ScriptedUpstream

THIS = "this tree"


def marked_paragraph(words: int) -> str:
    """One paragraph with markup in every sentence of ~12 words."""
    out = []
    for n in range(0, words - 1, 12):
        out.append(f"Step **w{n} bold** then `code{n}` and [a link](https://example.org/{n}) with w{n + 1} w{n + 2}.")
    return " ".join(out) + f" {LAST}"


def table(chunks: int) -> str:
    """One table of ``chunks // 4`` rows (~4 chunks a row)."""
    rows = [f"| r{n % 1000:03d} | {n % 997} | w{n % 89:02d} |" for n in range(chunks // 4)]
    return "| name | n | word |\n|---|---:|---|\n" + "\n".join(rows) + f"\n| {LAST} | 0 | end |"


def bullets(chunks: int) -> str:
    """One list of ``chunks // 4`` short items (~4 chunks an item)."""
    return "\n".join(f"- item w{n % 1000:03d} is {n % 997}" for n in range(chunks // 4)) + f"\n- {LAST}"


def fast(text: str) -> Callable[[], Behavior]:
    return lambda: Behavior(text=text, chunk_delay=0)


def base_revision() -> str:
    first = subprocess.run(
        ["git", "log", "--format=%H", "--grep=^live markdown:", "--reverse"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return f"{first[0]}^" if first else "HEAD"


def resolved(rev: str) -> str:
    out = subprocess.run(["git", "rev-parse", rev], cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def extract(rev: str, into: Path) -> Path:
    into.mkdir(parents=True, exist_ok=True)
    archive = into / "base.tar"
    subprocess.run(["git", "archive", "--format=tar", "-o", str(archive), rev], cwd=ROOT, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "base", filter="data")
    return into / "base"


def start_at(app: AppProcess, root: Path) -> AppProcess:
    """``app.start()`` with its code (``main.py``, the import path) taken from ``root``."""
    saved = app_process.ROOT
    app_process.ROOT = root
    try:
        return app.start()
    finally:
        app_process.ROOT = saved


def paired(
    apps: dict[str, AppProcess],
    upstream: ScriptedUpstream,
    timed: Timed,
    make: Callable[[], Behavior],
    lag: Path,
    n: int,
) -> dict[str, list[Run]]:
    runs: dict[str, list[Run]] = {name: [] for name in apps}
    for _ in range(n):
        for name, app in apps.items():
            CHAT["path"] = "/"  # each app its own chats
            runs[name].append(measure(app, upstream, timed, make(), lag))
    return runs


def show(
    label: str, runs: dict[str, list[Run]], text: str, floor: float | None = None, fixed: dict[str, int] | None = None
) -> None:
    size = len(text.encode())
    print(f"{label} ({size / 1024:.1f} KB of text, median of {len(runs[THIS])}):")
    kb = {k: statistics.median(r.bytes for r in v) / 1024 for k, v in runs.items()}
    cpu = {k: statistics.median(r.cpu for r in v) for k, v in runs.items()}
    for name in runs:
        lag = max(r.lag_ms for r in runs[name])
        frames = statistics.median(r.frames for r in runs[name])
        extra = f", {cpu[name] / floor:.2f}x the bare litellm loop ({floor:.2f} s)" if floor else ""
        if fixed:
            extra += f"; less the fixed overhead {(kb[name] * 1024 - fixed[name]) / size:.2f}x the text"
        print(
            f"  {name:<16} {kb[name]:8.1f} KB ({kb[name] * 1024 / size:.2f}x the text, {frames:.0f} frames), "
            f"CPU {cpu[name]:.2f} s{extra}, longest loop block {lag:.0f} ms"
        )
    for base in [name for name in runs if name != THIS]:
        print(f"  {THIS} / {base}: bytes {kb[THIS] / kb[base]:.2f}x, CPU {cpu[THIS] / cpu[base]:.2f}x")


def short(apps: dict[str, AppProcess], upstream: ScriptedUpstream, timed: Timed, lag: Path, n: int) -> None:
    """(a), (b) and (c): 500-token answers, 10 ms apart."""
    table = one_paragraph(500)
    runs = paired(apps, upstream, timed, lambda: Behavior(text=table, chunk_delay=0.01), lag, n)
    show("(a) the table stream: 500 tokens, one paragraph, 10 ms apart", runs, table)
    eight = answer_text() + f" {LAST}"
    runs = paired(apps, upstream, timed, lambda: Behavior(text=eight, chunk_delay=0.01), lag, n)
    show("(b) ws_bench's 500-token answer, 8 paragraphs, 10 ms apart", runs, eight)
    marked = marked_paragraph(500)
    runs = paired(apps, upstream, timed, lambda: Behavior(text=marked, chunk_delay=0.01), lag, n)
    show("(c) 500 tokens, one paragraph with markup in every sentence", runs, marked)


def long(
    apps: dict[str, AppProcess], upstream: ScriptedUpstream, timed: Timed, api: str, lag: Path, chunks: int
) -> None:
    """(d): the long answers, with what a one-word answer costs (the fixed overhead) and the bare loop's CPU."""
    tiny = paired(apps, upstream, timed, lambda: Behavior(text=f"ok {LAST}", chunk_delay=0), lag, 1)
    fixed = {name: runs[0].bytes for name, runs in tiny.items()}
    print(f"fixed overhead (a one-word answer): {', '.join(f'{k} {v / 1024:.1f} KB' for k, v in fixed.items())}")
    cases = {"one paragraph": one_paragraph, "one code block": code_block, "one table": table, "one list": bullets}
    for label, text in ((label, make(chunks)) for label, make in cases.items()):
        floor = bare(api, upstream, Behavior(text=text, chunk_delay=0))
        runs = paired(apps, upstream, timed, fast(text), lag, 1)
        show(f"(d) {chunks} chunks as fast as the upstream sends, {label}", runs, text, floor, fixed)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--skip-short", action="store_true", help="only (d), the long answers")
    parser.add_argument(
        "--base", action="append", help="a revision to compare with, repeatable (default: before live markdown)"
    )
    args = parser.parse_args()
    upstream = ScriptedUpstream()
    timed = Timed(upstream.app)
    upstream.app = timed  # type: ignore[assignment]
    api, stop = serve_in_thread(upstream)
    bases = [resolved(rev) for rev in args.base or [base_revision()]]
    print(f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}; bases {', '.join(bases)}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        lag = work / "lag.txt"
        lag.touch()
        os.environ["LC_LOOP_LAG_FILE"] = str(lag)
        os.environ["LEDGERCHAT_TEST_NO_FORK"] = "1"  # a fork of the warm process would run this tree's modules
        apps = {
            THIS: AppProcess(work / "live", api).start(),
            **{
                f"base {rev[:7]}": start_at(AppProcess(work / f"app-{n}", api), extract(rev, work / f"src-{n}"))
                for n, rev in enumerate(bases)
            },
        }
        try:
            if not args.skip_short:
                short(apps, upstream, timed, lag, args.runs)
            long(apps, upstream, timed, api, lag, args.chunks)
        finally:
            for app in apps.values():
                app.stop()
            del os.environ["LC_LOOP_LAG_FILE"]
    stop()


if __name__ == "__main__":
    main()
