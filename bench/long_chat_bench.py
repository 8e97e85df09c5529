"""One whole answer in a chat with ~105,000 streamed chunks behind it against the same answer in a fresh chat,
seen from outside the app's process (its own ``/proc`` counters), this tree against the code before (not a test).

    .venv/bin/python -m bench.long_chat_bench [--runs 5] [--turns 175] [--before REV | --this-only]

Issue 39's target: disk writes <= 2x and app CPU <= 1.3x those of the same answer in a fresh chat (742ef59: 256x
and 2.31x). Two data folders per side, each written through that side's own ``store.tinydb.store.Store`` (the
tests' ``turn_events``): one conversation of ``--turns`` complete turns of 600 chunks (175: 105,000 chunks; the
folder is cached under the temporary directory, like ``bench.make_chats``, keyed by the git tree of the side's
``store/``, and each run of the bench takes a private copy), and one of ``--runs`` + 1 conversations with nothing
in them yet (each answer goes to a chat of its own, so the fresh chat is fresh every time). One app per folder
(``tests.support.app_process``, started cold: the warm fork would run this tree's modules), one scripted upstream
in this process, one headless Chromium. An answer: its chat opened in a tab (watched as a user watches it), the
app left to settle, one message sent and answered with the same 600 chunks 5 ms apart, complete in the tab, its
last chunk in the conversation's file on disk (durable: the writer fsyncs), the app left to settle again. Its
cost is the app process's ``/proc/<pid>/io`` ``write_bytes`` (bytes it sent to the block layer: pages it dirtied,
counted when dirtied: the disk writes) and its CPU (utime + stime) from the first reading to the start of the
quiet second after it; ``wchar`` (every ``write`` call's bytes: files, pipes and the app's sockets, so the request
to the provider, which carries the chat's history: ~540 KB in the long chat) is shown beside them, with no target.
"Settled": for a second, under 4 KB more ``wchar`` and under 50 ms more CPU. A first answer in each app is not
counted (cold start). The sides take turns, the
order reversed each run; a ratio is the median of each run's long / fresh ratio. The data folders are on a real
disk (printed: a tmpfs would count no ``write_bytes``). ``--before`` (default: the parent of the first commit of
``store/tinydb/logfile.py``, the append-only store: 842dc01^) is extracted with ``git archive``; its folders are
made by its own ``Store`` (this module is copied into it for that). Rows go to ``bench.report`` (``bench.result``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from playwright.sync_api import Browser, sync_playwright

from bench import result
from bench.live_tail_bench import start_at
from demo.server.endpoint import serve_in_thread
from ledger.events.core import Created
from store.tinydb.store import Store
from tests.support.app_process import CHROMIUM_ARGS, ROOT, AppProcess
from tests.support.ledger_builders import Pace, stamp, turn_events
from tests.support.upstream import Behavior, ScriptedUpstream

BENCH = "bench.long_chat_bench"
FORMAT = 1  # bump when what ``make`` writes changes, so that a cached folder is made again
CHUNKS = 600  # of every answer: the ones behind the long chat and the one measured
LONG = "longchat"
PACE = Pace(request_ms=0, first_chunk_ms=300, chunk_ms=5)
T0 = datetime(2025, 12, 1, tzinfo=UTC)
TICKS = os.sysconf("SC_CLK_TCK")
DONE_JS = """marker => {
  const all = document.querySelectorAll('.lc-assistant');
  const a = all[all.length - 1];
  if (!a || a.dataset.status !== 'complete' || !a.textContent.includes(marker)) return false;
  return [...a.querySelectorAll('.lc-stream:not(.lc-meta) > .lc-tail')].every(t => t.textContent === '');
}"""


def words(n: int, last: str) -> list[str]:
    return [f"w{k % 1000:03d} " for k in range(n - 1)] + [last]


def make(path: Path, turns: int, fresh: int) -> None:
    """A folder written by this code's ``Store``: ``LONG`` with ``turns`` turns, and ``fresh`` empty chats."""
    store = Store.open(path, flush_interval=1.0)
    if turns:
        store.append(Created(conversation_id=LONG, ts=stamp(T0), title="a long chat"))
    for turn in range(1, turns + 1):
        for event in turn_events(LONG, turn, words(CHUNKS, "end."), at=T0 + timedelta(minutes=turn),
                                 question=f"question {turn}", pace=PACE):  # fmt: skip
            store.append(event)
        if turn % 10 == 0:
            assert store.flush_sync(timeout=600), "a write failed: the folder would not be what was asked"
    for n in range(fresh):
        store.append(Created(conversation_id=f"fresh{n}", ts=stamp(T0 + timedelta(seconds=n)), title=f"fresh {n}"))
    assert store.close(timeout=600) == 0, "events could not be saved"


def made(root: Path, key: str, into: Path, turns: int, fresh: int) -> Path:
    """``into``, a folder made by the code in ``root`` (``--make`` in a process of its own); one with a long chat
    is copied from the cache (``key``: the code's store), made there first if need be."""
    cache = Path(tempfile.gettempdir()) / f"ledger-long-chat-v{FORMAT}-{key}-{turns}x{CHUNKS}" if turns else into
    if not (cache / "index.json").exists():
        cache.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=cache.name + ".making-", dir=cache.parent))
        started = time.perf_counter()
        env = {**os.environ, "PYTHONPATH": str(root)}
        cmd = [sys.executable, "-m", BENCH, "--make", str(work), "--turns", str(turns), "--fresh", str(fresh)]
        subprocess.run(cmd, cwd=root, env=env, check=True)
        shutil.rmtree(cache, ignore_errors=True)
        work.rename(cache)
        print(f"  made {cache} in {time.perf_counter() - started:.0f} s", flush=True)
    if cache != into:
        shutil.copytree(cache, into, ignore=shutil.ignore_patterns("store.tinydb.lock"))
    return into


@dataclass(frozen=True)
class Counters:
    cpu: float  # seconds, utime + stime
    wchar: int
    write_bytes: int

    def __sub__(self, other: Counters) -> Counters:
        return Counters(self.cpu - other.cpu, self.wchar - other.wchar, self.write_bytes - other.write_bytes)


def counters(pid: int) -> Counters:
    io = dict(line.split(": ") for line in Path(f"/proc/{pid}/io").read_text().splitlines())
    stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return Counters((int(stat[11]) + int(stat[12])) / TICKS, int(io["wchar"]), int(io["write_bytes"]))


def settled(pid: int, quiet: float = 1.0, cap: float = 60.0) -> Counters:
    """The counters when the app went quiet: for ``quiet`` seconds, under 4 KB asked to write (an idle app's loop
    writes a few bytes to its wake-up pipe now and then) and under 50 ms of CPU."""
    mark, since, deadline = counters(pid), time.monotonic(), time.monotonic() + cap
    while time.monotonic() < deadline:
        time.sleep(0.1)  # the poll interval of a condition wait (the app going quiet), not a sync sleep
        now = counters(pid)
        if now.wchar - mark.wchar > 4096 or now.cpu - mark.cpu > 0.05:
            mark, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return mark
    raise RuntimeError(f"the app {pid} did not go quiet within {cap:.0f} s")


def on_disk(folder: Path, cid: str, marker: str, cap: float = 60.0) -> None:
    """Wait until the conversation's files (the compacted file, the log if any) hold ``marker``."""
    deadline = time.monotonic() + cap
    while not any(
        marker.encode() in p.read_bytes() for p in folder.glob(f"conv-{cid}.*") if p.suffix in {".json", ".log"}
    ):
        assert time.monotonic() < deadline, f"{marker} is not on disk in {folder} after {cap:.0f} s"
        time.sleep(0.1)  # the poll interval of a condition wait (the answer durable), not a sync sleep


def answer(browser: Browser, app: AppProcess, cid: str, marker: str, upstream: ScriptedUpstream) -> Counters:
    """One 600-chunk answer in chat ``cid`` of ``app``, watched in a tab: what it cost the app's process."""
    page = browser.new_page()
    page.set_default_timeout(600_000)
    try:
        page.goto(f"{app.url}/chat/{cid}")
        page.get_by_label("Message").fill(f"one more answer please ({marker})")
        before = settled(app.pid)
        upstream.plan(Behavior(text="".join(words(CHUNKS, marker)), chunk_delay=0.005))
        page.get_by_role("button", name="Send").click()
        page.wait_for_function(DONE_JS, arg=marker, polling=50)
        on_disk(app.data_dir, cid, marker)
        return settled(app.pid) - before
    finally:
        page.close()


def filesystem(path: Path) -> str:
    """The type of the file system ``path`` is on (``/proc/mounts``: the longest mount point above it)."""
    mounts = [line.split()[1:3] for line in Path("/proc/mounts").read_text().splitlines()]
    best = max((m for m in mounts if str(path.resolve()).startswith(m[0].rstrip("/") + "/")), key=lambda m: len(m[0]))
    return f"{best[1]} mounted at {best[0]}"


def ratios(longs: list[Counters], fresh: list[Counters], name: str) -> list[float]:
    """Each run's long / fresh: the sides of a run are measured back to back (this machine's speed drifts)."""
    return [getattr(a, name) / max(getattr(b, name), 1e-9) for a, b in zip(longs, fresh, strict=True)]


def ratio(longs: list[Counters], fresh: list[Counters], name: str) -> float:
    return float(statistics.median(ratios(longs, fresh, name)))


def median(runs: list[Counters], name: str) -> float:
    return float(statistics.median(getattr(r, name) for r in runs))


FIGURES = (  # counter, label, unit, scale, target (None: shown beside, not recorded)
    ("write_bytes", "disk writes (/proc write_bytes)", "MB", 1e-6, 2.0),
    ("wchar", "written, sockets too (/proc wchar)", "MB", 1e-6, None),
    ("cpu", "app CPU (utime + stime)", "s", 1.0, 1.3),
)


def show(sides: dict[str, dict[str, list[Counters]]], behind: int) -> None:
    """Print each side's medians and ratios; record this tree's (the first side), with the code before beside."""
    for side, runs in sides.items():
        print(f"  {side}:")
        for name, label, unit, scale, target in FIGURES:
            r, each = ratio(runs["long"], runs["fresh"], name), ratios(runs["long"], runs["fresh"], name)
            print(f"    {label:<36} long {median(runs['long'], name) * scale:8.2f} {unit}, fresh "
                  f"{median(runs['fresh'], name) * scale:6.2f} {unit}: {r:7.2f}x  "
                  + ("" if target is None else f"target <= {target:g}x {'PASS' if r <= target else 'MISS'} ")
                  + f"(each run: {', '.join(f'{x:.2f}' for x in each)})")  # fmt: skip
    (_, runs), *others = sides.items()
    for name, label, unit, scale, target in FIGURES:
        if target is None:
            continue
        long, fresh = (median(runs[k], name) * scale for k in ("long", "fresh"))
        compared = f"the same answer in a fresh chat, same run: {fresh:.2f} {unit}"
        for side, theirs in others:
            r0 = ratio(theirs["long"], theirs["fresh"], name)
            l0, f0 = (median(theirs[k], name) * scale for k in ("long", "fresh"))
            compared += f"; {side}, the code before: {r0:.2f}x ({l0:.2f} {unit} against {f0:.2f} {unit})"
        result.row(
            BENCH,
            f"one 600-chunk answer, 5 ms apart, watched in Chromium, in a chat with {behind:,} chunks behind it: "
            f"{label}, long / fresh (median of {len(runs['long'])} runs' ratios, sides taking turns)",
            f"{ratio(runs['long'], runs['fresh'], name):.2f}x (target <= {target:g}x): {long:.2f} {unit}",
            compared,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--turns", type=int, default=175, help="turns of 600 chunks behind the long chat")
    parser.add_argument("--before", help="the code to compare with (default: the parent of the append-only store)")
    parser.add_argument("--this-only", action="store_true", help="measure this tree only")
    parser.add_argument("--make", type=Path, help=argparse.SUPPRESS)  # (in a checkout) write a folder and exit
    parser.add_argument("--fresh", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.make:
        make(args.make, args.turns, args.fresh)
    else:
        bench(args)


def bench(args: argparse.Namespace) -> None:
    from bench.many_streams_bench import before_issue_39, checkout, git  # (not in older trees, which run ``make``)

    here = git("rev-parse", "--short", "HEAD")
    before = None if args.this_only else git("rev-parse", "--short", args.before or before_issue_39())
    upstream = ScriptedUpstream()
    base, stop = serve_in_thread(upstream)
    os.environ["LEDGERCHAT_TEST_NO_FORK"] = "1"  # every app cold, from its own tree (a fork runs this tree's)
    apps: dict[tuple[str, str], AppProcess] = {}
    samples: dict[str, dict[str, list[Counters]]] = {}
    with tempfile.TemporaryDirectory(prefix="long-chat-bench-") as tmp, sync_playwright() as p:
        work = Path(tmp)
        print(f"long chat: {args.turns * CHUNKS:,} chunks behind it, {args.runs} runs, {os.cpu_count()} cores, load "
              f"{os.getloadavg()[0]:.1f}; this tree ({here}) against {before or 'nothing'}; data on "
              f"{filesystem(work)} ({work})", flush=True)  # fmt: skip
        if filesystem(work).startswith("tmpfs"):
            print("  (a tmpfs counts no write_bytes: set TMPDIR to a folder on a disk)")
        roots = {f"this tree ({here})": (ROOT, "HEAD")}
        if before:
            root = checkout(before, work / "before")
            shutil.copyfile(ROOT / "bench/long_chat_bench.py", root / "bench/long_chat_bench.py")
            roots[f"before ({before})"] = (root, before)
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        try:
            for n, (side, (root, rev)) in enumerate(roots.items()):
                key = git("rev-parse", "--short", f"{rev}:store")  # the store's code decides the files
                for kind, turns, fresh in (("long", args.turns, 0), ("fresh", 0, args.runs + 1)):
                    folder = made(root, key, work / f"{kind}-{n}" / "data", turns, fresh)
                    apps[side, kind] = start_at(AppProcess(folder, base), root)
                samples[side] = {"long": [], "fresh": []}
            order = list(apps)
            for run in range(args.runs + 1):  # run 0 is not counted: each app's first answer starts cold
                for side, kind in order if run % 2 == 0 else order[::-1]:
                    cid = LONG if kind == "long" else f"fresh{run}"
                    got = answer(browser, apps[side, kind], cid, f"zzend{run}x", upstream)
                    if run:
                        samples[side][kind].append(got)
                    print(f"  run {run}{'' if run else ' (not counted)'}, {side}, {kind}: write_bytes "
                          f"{got.write_bytes / 1e6:.2f} MB, wchar {got.wchar / 1e6:.2f} MB, CPU {got.cpu:.2f} s",
                          flush=True)  # fmt: skip
        finally:
            browser.close()
            for app in apps.values():
                app.stop()
            stop()
    print(
        f"medians of {args.runs} runs (a ratio: the median of each run's long / fresh); load {os.getloadavg()[0]:.1f}"
    )
    show(samples, args.turns * CHUNKS)
    result.save()


if __name__ == "__main__":
    main()
