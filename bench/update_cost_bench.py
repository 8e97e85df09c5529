"""What one streaming update costs the app in a chat with 1 and with 500 earlier turns, against the code before
(issue 39 item 2; not a test).

    .venv/bin/python -m bench.update_cost_bench [--runs 5] [--turns 500] [--words 1200] [--base REV]

Two app processes on one scripted upstream (in this process): this tree, and ``--base`` (default: the code before
``ui.shown_path``, the parent of the commit that added it), extracted with ``git archive`` (``bench.live_tail_bench``).
Each has the same data folder, written through the real ``Store`` (``bench.make_chats``' turns): per run a chat
with 1 earlier turn and one with ``--turns``. One headless Chromium page is opened on a chat; once it shows it, a
``--words``-word answer is streamed 10 ms apart, and between the moment the page shows its word ``START`` (a tenth
in) and its word ``STOP`` (nine tenths in) the bench reads the app process's CPU (``/proc/<pid>/stat``, user +
system) and counts the websocket messages and bytes the page received. A streaming update is one websocket
message; CPU and bytes are given per update, so the answer's start (its request carries the whole history) and
its end (the context meter's reading) are not counted. The apps and the chats alternate run by run; medians are
shown, with each app's ratio of the long chat to the short one (the target: at most 1.2x). Rows are recorded for
``bench.report`` (``bench.result``).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from bench import result
from bench.live_tail_bench import extract, resolved, start_at
from bench.make_chats import conversation
from bench.stream_bench import cpu_seconds
from demo.server.endpoint import serve_in_thread
from store.tinydb.store import Store
from tests.support.app_process import CHROMIUM_ARGS, ROOT, AppProcess
from tests.support.upstream import Behavior, ScriptedUpstream

BENCH = "bench.update_cost_bench"
THIS = "this tree"
START, STOP, LAST = "zzstart", "zzstop", "zzlast"
SHOWS = """([word, before]) => {
  const all = document.querySelectorAll('.lc-assistant');
  return all.length > before && all[all.length - 1].textContent.includes(word);
}"""
DONE = "before => { const a = document.querySelectorAll('.lc-assistant'); return a.length > before && " + (
    "a[a.length - 1].dataset.status === 'complete'; }"
)


@dataclass
class Update:
    cpu: float  # app CPU seconds between START and STOP
    frames: int  # websocket messages received meanwhile (one per update)
    bytes: int

    @property
    def cpu_us(self) -> float:
        return self.cpu * 1e6 / max(self.frames, 1)

    @property
    def bytes_each(self) -> float:
        return self.bytes / max(self.frames, 1)


def answer(words: int) -> str:
    out = [f"w{n % 1000:03d}" for n in range(words)]
    out[words // 10], out[words * 9 // 10], out[-1] = START, STOP, LAST
    return " ".join(out)


def make_data(path: Path, runs: int, turns: int) -> dict[int, list[str]]:
    """The data folder: per run a chat with 1 earlier turn and one with ``turns``; their ids by length."""
    rng = random.Random(39)
    store = Store.open(path, flush_interval=1.0)
    chats: dict[int, list[str]] = {1: [], turns: []}
    for run in range(runs):
        for length in chats:
            cid = f"t{length}r{run}"
            chats[length].append(cid)
            for event in conversation(rng, cid, length):
                store.append(event)
    assert store.close(timeout=600) == 0, "the bench's chats could not be saved"
    return chats


def measure(app: AppProcess, upstream: ScriptedUpstream, cid: str, text: str) -> Update:
    assert app.proc is not None
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.set_default_timeout(120_000)
        frames: list[int] = []
        counting = {"on": False}

        def on_ws(ws: Any) -> None:
            def count(payload: str | bytes) -> None:
                if counting["on"]:
                    frames.append(len(payload))

            ws.on("framereceived", count)

        page.on("websocket", on_ws)
        page.goto(f"{app.url}/chat/{cid}")
        page.wait_for_selector("[data-status=complete]")
        page.wait_for_timeout(1500)  # the window filled above the first messages, the meter's reading made
        before = page.locator(".lc-assistant").count()
        page.get_by_label("Message").fill("stream please")
        upstream.plan(Behavior(text=text, chunk_delay=0.01))
        page.get_by_role("button", name="Send").click()
        page.wait_for_function(SHOWS, arg=[START, before], polling=20)
        counting["on"], cpu0 = True, cpu_seconds(app.proc.pid)
        page.wait_for_function(SHOWS, arg=[STOP, before], polling=20)
        cpu, counting["on"] = cpu_seconds(app.proc.pid) - cpu0, False
        page.wait_for_function(DONE, arg=before, polling=50)
        browser.close()
    return Update(cpu, len(frames), sum(frames))


def base_revision() -> str:
    """The parent of the commit that added ``ui/shown_path.py`` (the transcript walked its path on every render)."""
    added = subprocess.run(
        ["git", "log", "--diff-filter=A", "--format=%H", "--", "ui/shown_path.py"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    return f"{added[-1]}^" if added else "HEAD"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--words", type=int, default=1200)
    parser.add_argument("--base", default=None, help="the revision to compare with (default: before ui.shown_path)")
    args = parser.parse_args()
    base = resolved(args.base or base_revision())
    upstream = ScriptedUpstream()
    api, stop = serve_in_thread(upstream)
    text = answer(args.words)
    print(f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}; base {base[:10]}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        started = time.perf_counter()
        chats = make_data(work / "data-this", args.runs, args.turns)
        shutil.copytree(work / "data-this", work / "data-base", ignore=shutil.ignore_patterns("*.lock"))
        print(f"chats made in {time.perf_counter() - started:.1f} s")
        os.environ["LEDGERCHAT_TEST_NO_FORK"] = "1"  # a fork of the warm process would run this tree's modules
        apps = {
            THIS: AppProcess(work / "data-this", api).start(),
            f"base {base[:7]}": start_at(AppProcess(work / "data-base", api), extract(base, work / "src")),
        }
        got: dict[tuple[str, int], list[Update]] = {(name, n): [] for name in apps for n in chats}
        try:
            for run in range(args.runs):
                for name, app in apps.items():
                    for length, ids in chats.items():
                        update = measure(app, upstream, ids[run], text)
                        got[(name, length)].append(update)
                        print(
                            f"  run {run + 1} {name:<14} {length:4d} turns: {update.frames:4d} updates, "
                            f"{update.cpu_us:7.0f} µs CPU, {update.bytes_each:6.0f} B each",
                            flush=True,
                        )
        finally:
            for app in apps.values():
                app.stop()
    stop()
    report(got, list(apps), args.turns)
    result.save()


def report(got: dict[tuple[str, int], list[Update]], names: list[str], turns: int) -> None:
    print(f"median of {len(got[(names[0], 1)])} runs, per streaming update (one websocket message):")
    cpu = {k: statistics.median(u.cpu_us for u in v) for k, v in got.items()}
    size = {k: statistics.median(u.bytes_each for u in v) for k, v in got.items()}
    for name in names:
        cpu_ratio, size_ratio = cpu[(name, turns)] / cpu[(name, 1)], size[(name, turns)] / size[(name, 1)]
        print(
            f"  {name:<14} 1 turn: {cpu[(name, 1)]:6.0f} µs, {size[(name, 1)]:5.0f} B; {turns} turns: "
            f"{cpu[(name, turns)]:6.0f} µs, {size[(name, turns)]:5.0f} B; ratio CPU {cpu_ratio:.2f}x, "
            f"bytes {size_ratio:.2f}x"
        )
    this, base = names
    for what, figures, unit in (("app CPU", cpu, "µs"), ("websocket bytes", size, "B")):
        result.row(
            BENCH,
            f"{what} per streaming update, chat with {turns} earlier turns / with 1 (Chromium, 10 ms apart)",
            f"{figures[(this, turns)] / figures[(this, 1)]:.2f}x ({figures[(this, turns)]:.0f} / "
            f"{figures[(this, 1)]:.0f} {unit})",
            f"{base}: {figures[(base, turns)] / figures[(base, 1)]:.2f}x ({figures[(base, turns)]:.0f} / "
            f"{figures[(base, 1)]:.0f} {unit})",
        )


if __name__ == "__main__":
    main()
