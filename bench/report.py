"""Writes docs/measured.md from the benches' own results: every row made by a bench in this run, nothing by hand.

    .venv/bin/python -m bench.report [--quick] [--chainlit-venv DIR] [--out docs/measured.md]

Runs each bench it knows (``BENCHES``: the ones that finish in a few minutes on 2 cores; ``--quick`` passes each
its shorter mode) in a process of its own, with ``LC_BENCH_RESULT`` naming a file where the bench saves its rows
(``bench.result``): what it measured, the figure, and what that figure was compared with in the same run.
Guarantees: every table row of the file names the bench that made it, the commit it ran on (``git rev-parse
--short HEAD``; a tree with uncommitted changes to anything but Markdown is written as ``<commit>+dirty``, which
``tests/app/test_docs.py`` refuses, so only committed code is ever reported), the date, the machine's cores and its
1-minute load average when the bench started and when it ended. A bench that cannot run here (no Chromium, no
PostgreSQL, Chainlit not installed) or that failed gets one line saying so, never a row. Benches too heavy for
this report are listed with how to run them by hand; those marked ``by_hand`` (``bench.many_streams_bench``,
``bench.dialect_bench``, ``bench.long_chat_bench``) run only when named by ``--only``, and their rows stay through
later runs until they are run again. With ``--only``, the rows the other benches made in an earlier run stay as
they were (each still naming its own commit and date); only the named benches' rows are new.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bench.result import VARIABLE, Row, load
from tests.support.postgres import unavailable_reason

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "measured.md"
CHROMIUM = Path("/usr/bin/chromium")  # where the benches launch it


@dataclass(frozen=True)
class Bench:
    module: str
    full: tuple[str, ...]
    quick: tuple[str, ...]
    needs: tuple[str, ...] = ()  # "chromium", "postgres"
    env: tuple[tuple[str, str], ...] = ()
    by_hand: bool = False  # run only when named by ``--only`` (its rows stay from the run that made them)


BENCHES = (
    Bench("bench.ledger_bench", ("--quick",), ("--quick",)),
    Bench("bench.engine_bench", (), ("--quick",)),
    Bench("bench.tools_bench", (), ()),
    Bench("bench.open_bench", (), ("--quick",)),
    Bench("bench.store_bench", (), ("--quick",)),
    Bench("bench.telemetry_bench", ("5000",), ("1000",)),
    Bench("bench.ws_bench", (), (), ("chromium",)),
    Bench("bench.stream_bench", (), ("--quick",), ("chromium",)),
    Bench("bench.update_cost_bench", (), ("--runs", "1"), ("chromium",)),
    Bench("bench.pg_bench", (), ("--quick",), ("postgres",), (("PG_BENCH_ONLY", "store"),)),
    Bench("bench.session_bench", (), ()),
    Bench("bench.spend_bench", (), ("--quick",)),
    Bench(
        "bench.many_streams_bench",
        ("--pairs", "3", "--profile"),
        ("--pairs", "1", "--streams", "20", "--watchers", "5"),
        ("chromium",),
        by_hand=True,
    ),
    Bench("bench.dialect_bench", ("--runs", "5"), ("--quick",), ("chromium",), by_hand=True),
    Bench("bench.long_chat_bench", ("--runs", "5"), ("--runs", "2"), ("chromium",), by_hand=True),
)

BY_MODULE = {b.module for b in BENCHES}
BY_HAND = {
    "bench.many_streams_bench": "100 streams for about 4 minutes, alternating with the code before; run it alone "
    "(`python -m bench.report --only bench.many_streams_bench` records its rows, kept by later runs)",
    "bench.dialect_bench": "the 500-token table stream in each of the four dialects, on both routes and against "
    "litellm's bare loop, about 10 minutes; run it alone (`python -m bench.report --only bench.dialect_bench` "
    "records its rows, kept by later runs)",
    "bench.long_chat_bench": "one answer in a chat with 105,000 chunks behind it against a fresh chat, this tree "
    "and the code before taking turns, about 10 minutes (the first run makes each side's long chat, cached); run it "
    "alone (`python -m bench.report --only bench.long_chat_bench` records its rows, kept by later runs)",
    "bench.many_chats_bench": "makes 10,000 chats first (about 5 minutes), then a long Chromium run",
    "bench.live_tail_bench": "compares this tree with older checkouts (`--base REV`), not with a baseline of it",
    "bench.closing_tabs_bench": "prints its figures only; run it by hand",
    "bench.attachment_bench": "prints its figures only; run it by hand",
}


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def commit() -> str:
    changed = [line for line in git("status", "--porcelain").splitlines() if line]
    dirty = [line for line in changed if not line.endswith(".md")]  # prose changes no figure
    return git("rev-parse", "--short", "HEAD") + ("+dirty" if dirty else "")


def missing(bench: Bench) -> str | None:
    for need in bench.needs:
        if need == "chromium" and not CHROMIUM.exists():
            return f"Chromium is not at {CHROMIUM}"
        if need == "postgres" and (reason := unavailable_reason()):
            return reason
    return None


def run(bench: Bench, quick: bool, extra: tuple[str, ...], timeout: float) -> tuple[list[Row], str, str]:
    """The bench's rows, the load averages at its start and end, and a sentence if it failed."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rows.json"
        env = {**os.environ, VARIABLE: str(out), "PYTHONPATH": str(ROOT), **dict(bench.env)}
        args = [*(bench.quick if quick else bench.full), *extra]
        load0 = os.getloadavg()[0]
        print(f"== {bench.module} {' '.join(args)} (load average {load0:.1f})", flush=True)
        started = time.monotonic()
        try:
            done = subprocess.run(
                [sys.executable, "-m", bench.module, *args], cwd=ROOT, env=env, timeout=timeout, text=True
            )
            failure = "" if done.returncode == 0 else f"exited with status {done.returncode}"
        except subprocess.TimeoutExpired:
            failure = f"did not finish within {timeout:.0f} s"
        load1 = os.getloadavg()[0]
        print(f"== {bench.module}: {time.monotonic() - started:.0f} s", flush=True)
        return load(out), f"{load0:.1f} → {load1:.1f}", failure


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def earlier_rows(path: Path, others_than: list[str]) -> dict[str, list[str]]:
    """The table rows of ``path`` made by benches not in ``others_than``, by bench, as written."""
    kept: dict[str, list[str]] = {}
    for line in path.read_text().splitlines() if path.exists() else ():
        if line.startswith("| `bench.") and (module := line.split("`")[1]) not in others_than:
            kept.setdefault(module, []).append(line)
    return kept


def render(
    rows: list[tuple[Row, str, str, str]], notes: list[str], quick: bool, cores: int, kept: dict[str, list[str]]
) -> str:
    lines = [
        "# Measured",
        "",
        "Made by `python -m bench.report" + (" --quick" if quick else "") + "` on one machine; do not edit by hand.",
        "Every row is one bench's own result (`bench.result`): the bench that made it, the commit it ran on, the",
        "date, the machine's cores and its 1-minute load average when the bench started → ended, and what the figure",
        "was compared with in the same run. A baseline does the same work as what it is compared with: the app on",
        "its light route against a bare loop on that route (and, for scale, against litellm's plain route); the app",
        "on litellm's plain route against litellm's plain loop. Other work on the machine shows in the load average;",
        "read ratios of one run rather than absolute figures. `tests/app/test_docs.py` checks that every row names its",
        "bench and a commit of this repository.",
        "",
        "| bench | what | figure | compared with, same run | commit | date (UTC) | cores | load average |",
        "|---|---|---|---|---|---|---|---|",
    ]
    new: dict[str, list[str]] = {}
    for row, sha, date, load_avg in rows:
        new.setdefault(row.bench, []).append(
            f"| `{row.bench}` | {cell(row.what)} | {cell(row.figure)} | {cell(row.compared_with)} | {sha} | {date} "
            f"| {cores} | {load_avg} |"
        )
    for bench in [*(b.module for b in BENCHES), *(m for m in {**kept, **new} if m not in BY_MODULE)]:
        lines += new.get(bench) or kept.get(bench, [])  # this run's rows, else an earlier run's (``--only``)
    lines += ["", "## Not in this run", ""]
    lines += [f"- {note}" for note in notes]
    lines += [
        "",
        "## Running a bench by hand",
        "",
        "Each bench is a module: `.venv/bin/python -m bench.<name>`; its docstring says what it measures and its",
        "options. `bench.stream_bench --chainlit` adds Chainlit on the same stream (it makes a throwaway venv from",
        "the package registry, about 90 s; `--chainlit-venv DIR` reuses one, and `bench.report --chainlit-venv`",
        "passes it on). `bench.pg_bench` starts its own throwaway PostgreSQL cluster.",
        "`LEDGER_CHAT_STREAM_ROUTE=litellm` runs the app on litellm's plain route.",
        "",
        "`bench.many_streams_bench` (100 streams at 30 chunks/s, 20 socket watchers and one Chromium tab, the",
        "upstream in its own process, this tree against the code before issue 39 taking turns; about 8 minutes) runs",
        "alone: `nice -n 10 .venv/bin/python -m bench.report --only bench.many_streams_bench` records its rows and",
        "prints its table, each run's figures and where the app's event loop thread's CPU went in the window and in",
        "the Stop (`--profile`: one cProfile run per side, not counted). Read its rows beside their load average and",
        "the chunks the upstream managed to send: on 2 cores shared with other work its latencies follow the load.",
        "",
        "`bench.dialect_bench` (the 500-token table stream, 10 ms apart in Chromium, in the OpenAI, Anthropic, Gemini",
        "and Ollama dialects: the app on its light route and on litellm's plain route against litellm's bare loop in",
        "that dialect, taking turns; about 10 minutes) runs alone too: `.venv/bin/python -m bench.report --only",
        "bench.dialect_bench`.",
        "",
        "`bench.long_chat_bench` (one 600-chunk answer in a chat with 105,000 chunks behind it against the same",
        "answer in a fresh chat, each app's disk writes and CPU from its own `/proc` counters, this tree and the code",
        "before the append-only store taking turns) runs alone too: `.venv/bin/python -m bench.report --only",
        "bench.long_chat_bench`.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="each bench's shorter mode")
    parser.add_argument("--chainlit-venv", type=Path, help="a venv with Chainlit 2: stream_bench compares with it")
    parser.add_argument("--only", action="append", help="run only this bench (repeatable), e.g. bench.ws_bench")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per bench")
    args = parser.parse_args()
    if shutil.which("git") is None:
        raise SystemExit("git is needed to name the commit")
    sha, cores = commit(), os.cpu_count() or 1
    rows: list[tuple[Row, str, str, str]] = []
    notes: list[str] = []
    ran = set(args.only or ())
    for bench in BENCHES:
        if args.only and bench.module not in args.only or bench.by_hand and not args.only:
            continue
        extra: tuple[str, ...] = ()
        if bench.module == "bench.stream_bench":
            if args.chainlit_venv:
                extra = ("--chainlit-venv", str(args.chainlit_venv))
            else:
                notes.append(
                    "`bench.stream_bench`'s Chainlit comparison: not run (Chainlit is not installed here; "
                    "`--chainlit-venv DIR` names a venv that has it)."
                )
        if reason := missing(bench):
            notes.append(f"`{bench.module}`: not run: {reason}.")
            continue
        date = datetime.now(UTC).strftime("%Y-%m-%d %H:%M")
        got, load_avg, failure = run(bench, args.quick, extra, args.timeout)
        if failure:
            notes.append(f"`{bench.module}`: {failure}; its rows are left out.")
            continue
        if not got:
            notes.append(f"`{bench.module}`: ran, but recorded no rows.")
        rows += [(r, sha, date, load_avg) for r in got]
    notes += [f"`{module}`: not run by the report: {why}." for module, why in BY_HAND.items() if module not in ran]
    kept = earlier_rows(args.out, args.only or [b.module for b in BENCHES if not b.by_hand])
    args.out.write_text(render(rows, notes, args.quick, cores, kept))
    print(f"wrote {args.out} ({len(rows)} rows, commit {sha})")


if __name__ == "__main__":
    main()
