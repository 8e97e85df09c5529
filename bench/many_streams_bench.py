"""Many streams at once (not a test): N conversations streaming through one app instance, some watched in Chromium.

    nice -n 10 .venv/bin/python -m bench.many_streams_bench [--streams 100] [--watched 20] [--rate 30] [--seconds 15]

The app is ``bench.many_streams_app`` (the real app plus routes that call its engine's ``submit`` and ``cancel``,
as a page does); the upstream (``tests.support.upstream``) runs in this process and sends every answer at
``--rate`` chunks a second, one word per chunk, each word naming its stream and its number (``b042w0017``). The
same figures are measured for a single stream watched in one tab first, in the same run, as the baseline:
- app CPU per stream: the app process's CPU over a ``--seconds`` window while every stream runs, / streams
  (% of one core);
- chunk -> DOM: for every word that appeared in a watched tab, the time from the upstream sending it to the tab's
  DOM showing it (a MutationObserver stamps each new word; both clocks are this machine's wall clock): p50/p95
  (target p95 <= 250 ms);
- chunk -> the engine's ledger: for the watched conversations' words, from the upstream sending it to the
  engine recording its ``chunk`` (the app's own lag, before any page): p50/p95;
- Stop -> upstream closed: Stop in every conversation at once (the engine's one cancel path), from the moment the
  request left this process to the upstream seeing each connection close: median and p95 (targets <= 60 ms and
  <= 100 ms), and the engine's own ``upstream_closed.close_ms``;
- the event loop's longest block in the window (``LC_LOOP_LAG_FILE``: the longest time the loop's thread ran
  while a 5 ms sleep was overdue) and its longest late wake-up (a busy machine included);
- beside them, the CPU of the upstream and of Chromium, and the load average: on 2 cores they decide the rest.
Variables: ``LC_BENCH_NO_EFFECTS=1`` removes the page's two CSS effects in the watched tabs (an A/B of what they
cost Chromium), ``LC_BENCH_PYSPY=<py-spy binary>`` records the app's stacks in the window and during the Stop
(``/tmp/many-streams-*.stacks``; py-spy pauses the process to sample: those runs' latencies do not count),
``LC_BENCH_KEEP_LOG=<file>`` keeps the app's log, ``LEDGER_CHAT_STREAM_ROUTE=litellm`` runs the app on litellm's
plain route.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, Page, sync_playwright
from playwright.sync_api import Error as PlaywrightError
from starlette.responses import JSONResponse

from bench.stream_bench import cpu_seconds
from demo.server.endpoint import serve_in_thread
from tests.support.app_process import CHROMIUM_ARGS, FAKE_KEY, READY_LINE, ROOT, free_port
from tests.support.upstream import Behavior, ScriptedUpstream

WORD = re.compile(rb"([a-z]\d{3})w(\d{4})")
PROMPT = re.compile(r"stream ([a-z]\d{3})")
SEEN_JS = """() => {
  window.__lcSeen = {}; let last = -1;
  const look = () => {
    const all = document.querySelectorAll('.lc-assistant');
    const a = all[all.length - 1];
    if (!a) return;
    const m = a.textContent.slice(-48).match(/w(\\d{4})\\D*$/);
    if (!m) return;
    const n = parseInt(m[1], 10), now = Date.now();
    if (last >= 0) for (let k = last + 1; k <= n; k++) window.__lcSeen[k] = now;
    if (n > last) last = n;
  };
  new MutationObserver(look).observe(document, { childList: true, subtree: true, characterData: true });
}"""


#: ``LC_BENCH_NO_EFFECTS=1``: the watched tabs without the streaming dots' endless animation and the footer's
#: backdrop blur, to see what they cost Chromium.
NO_EFFECTS = ".lc-typing i { animation: none !important; } .lc-footer { backdrop-filter: none !important; }"


class BenchUpstream(ScriptedUpstream):
    """Answers ``stream xNNN`` with ``words`` words ``xNNNw0000 ...`` at ``rate`` chunks a second, and stamps
    the wall time each word left (the ASGI send of its body piece)."""

    def __init__(self, rate: float, words: int) -> None:
        super().__init__(chunk_delay=1 / rate)
        self.words = words
        self.sent: dict[tuple[str, int], float] = {}
        inner = self.app

        async def stamped(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http" and scope["path"] == "/stats":
                await JSONResponse(self.stats())(scope, receive, send)
                return
            if scope["type"] == "http" and scope["path"] == "/ended":  # light: polled while the streams close
                await JSONResponse({"ended": self.ended()})(scope, receive, send)
                return
            if scope["type"] == "http" and scope["path"] == "/reset":
                self.reset()
                self.sent.clear()
                await JSONResponse({})(scope, receive, send)
                return

            async def timed(message: Any) -> None:
                await send(message)
                body = message.get("body", b"") if message.get("type") == "http.response.body" else b""
                found = WORD.search(body) if body else None
                if found:
                    self.sent[(found.group(1).decode(), int(found.group(2)))] = time.time()

            await inner(scope, receive, timed)

        self.app = stamped  # type: ignore[assignment]

    def stats(self) -> dict[str, Any]:
        """What this run's streams did: when each word left, and when each request ended and how."""
        return {"sent": [[tag, n, at] for (tag, n), at in list(self.sent.items())], "ended": self.ended(),
                "cpu": time.process_time()}  # fmt: skip

    def ended(self) -> list[dict[str, Any]]:
        """When each request ended and how (without the words' stamps: this is polled while the Stop is measured,
        and serializing every stamp would hold this upstream's loop for tens of milliseconds a poll)."""
        with self.lock:
            records = [(r.messages, r.closed_at, r.finished) for r in self.records]
        return [
            {"tag": (PROMPT.findall(str(m[-1].get("content", ""))) or ["?"])[0], "closed_at": c, "finished": f}
            for m, c, f in records
        ]

    def choose(self, messages: list[dict[str, Any]], tools: list[str]) -> Behavior:
        found = PROMPT.search(str(messages[-1].get("content", "")))
        tag = found.group(1) if found else "z999"
        # paragraphs of 60 words; a paragraph starts at its line's start (after a space it would read as the
        # continuation of a list item, and the whole answer would stay one growing block)
        text = "".join(f"{tag}w{n:04d}" + ("\n\n" if n % 60 == 59 else " ") for n in range(self.words))
        return Behavior(text=text, chunk_delay=self.chunk_delay)


class UpstreamProcess:
    """The bench upstream in a process of its own (its CPU is neither the app's nor this driver's), on a free port;
    ``stats()`` reads what it did. ``time.monotonic`` is the machine's clock, the same in every process."""

    def __init__(self, rate: float, words: int, log: Path) -> None:
        cmd = [sys.executable, "-m", "bench.many_streams_bench", "--serve-upstream", f"{rate}:{words}"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=log.open("ab"), text=True)
        assert self.proc.stdout is not None
        self.base = self.proc.stdout.readline().strip()
        assert self.base.startswith("http"), log.read_text()[-2000:]

    def stats(self) -> dict[str, Any]:
        return dict(self._get("/stats"))

    def ended(self) -> list[dict[str, Any]]:
        return list(self._get("/ended")["ended"])

    def reset(self) -> None:
        self._get("/reset")

    def _get(self, path: str) -> Any:
        with urllib.request.urlopen(self.base.removesuffix("/v1") + path, timeout=60) as response:
            return json.loads(response.read())

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def serve_upstream(spec: str) -> None:
    rate, words = spec.split(":")
    upstream = BenchUpstream(float(rate), int(words))
    base, _ = serve_in_thread(upstream)
    print(base, flush=True)
    threading.Event().wait()


class BenchApp:
    """``bench.many_streams_app`` on a free port, against the upstream, its loop sampled into ``lag_file``."""

    def __init__(self, data_dir: Path, api_base: str, lag_file: Path, root: Path = ROOT) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = data_dir.parent / f"app-{self.port}.log"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "NICEGUI_", "LEDGERCHAT_"))}
        env.update(OPENAI_API_KEY=FAKE_KEY, PYTHONPATH=str(root), LC_LOOP_LAG_FILE=str(lag_file))
        cmd = [sys.executable, "-m", "bench.many_streams_app", "--port", str(self.port), "--data-dir", str(data_dir)]
        cmd += ["--model", "openai/test-model", "--api-base", api_base, "--no-tools"]
        self.proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=self.log.open("ab"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 90
        while READY_LINE not in self.log.read_text(errors="replace"):
            assert self.proc.poll() is None and time.monotonic() < deadline, self.log.read_text()[-2000:]
            time.sleep(0.1)  # the poll interval of a condition wait (the ready line), not a sync sleep

    def call(self, method: str, path: str) -> Any:
        request = urllib.request.Request(self.url + path, method=method, data=b"" if method == "POST" else None)
        with urllib.request.urlopen(request, timeout=300) as response:
            return json.loads(response.read())

    def stop(self) -> None:
        if os.environ.get("LC_BENCH_KEEP_LOG"):
            Path(os.environ["LC_BENCH_KEEP_LOG"]).write_text(self.log.read_text(errors="replace"))
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@dataclass
class Figures:
    streams: int
    cpu_pct_per_stream: float = 0.0
    dom_ms: list[float] = field(default_factory=list)
    stop_ms: list[float] = field(default_factory=list)
    close_ms: list[float] = field(default_factory=list)
    block_ms: float = 0.0
    late_ms: float = 0.0
    unclosed: int = 0
    reloads: int = 0
    upstream_pct: float = 0.0
    browser_pct: float = 0.0
    load: float = 0.0
    words_sent: int = 0
    stop_call_ms: float = 0.0
    stop_began_ms: float = 0.0
    app_closed_ms: list[float] = field(default_factory=list)
    engine_ms: list[float] = field(default_factory=list)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def descendants_cpu(root: int) -> float:
    """CPU seconds of every live process under ``root`` (here: the app, the upstream, Playwright's driver and the
    Chromium it runs)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    total, todo = 0.0, [pid for pid, parent in parents.items() if parent == root]
    while todo:
        pid = todo.pop()
        try:
            total += cpu_seconds(pid)
        except OSError:
            continue
        todo += [child for child, parent in parents.items() if parent == pid]
    return total


def run(browser: Browser, upstream: UpstreamProcess, tmp: Path, streams: int, watched: int, seconds: float,
        tag: str, root: Path = ROOT) -> Figures:  # fmt: skip
    """One measured run of the app in ``root`` (a checkout of the code: this one, or an older one to compare)."""
    lag_file = tmp / f"lag-{tag}.txt"
    lag_file.touch()
    app = BenchApp(tmp / f"data-{tag}", upstream.base, lag_file, root)
    figures = Figures(streams)
    try:
        context = browser.new_context(viewport={"width": 1000, "height": 800})
        upstream.reset()
        cids = app.call("POST", f"/bench/create?n={streams}&tag={tag}")["cids"]
        tabs: list[Page] = []
        for cid in cids[:watched]:
            tab = context.new_page()
            tab.set_default_timeout(60_000)
            tab.add_init_script(f"({SEEN_JS})()")  # on every load: a reload (a lost websocket) starts over
            tab.goto(f"{app.url}/chat/{cid}")
            tab.get_by_label("Message").wait_for()
            if os.environ.get("LC_BENCH_NO_EFFECTS"):  # what the page's CSS effects cost Chromium (an A/B)
                tab.add_style_tag(content=NO_EFFECTS)
            tabs.append(tab)
        app.call("POST", f"/bench/send?tag={tag}")  # the tabs watch every stream from its first chunk
        time.sleep(1.0)  # let every stream reach its steady pace before the window opens (a settling time)
        up0, browser0 = upstream.stats()["cpu"], descendants_cpu(os.getpid())
        cpu0, wall0 = cpu_seconds(app.proc.pid), time.time()
        spy = os.environ.get("LC_BENCH_PYSPY")  # a py-spy binary: the window's stacks (raw) beside the figures
        if spy and streams > 1:
            out = str(tmp.parent / f"many-streams-{tag}.stacks")
            args = ["record", "-p", str(app.proc.pid), "-d", str(int(seconds)), "-f", "raw", "-o", out, "-n"]
            subprocess.Popen([spy, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(seconds)  # the measuring window itself
        cpu1, wall1 = cpu_seconds(app.proc.pid), time.time()
        stats = upstream.stats()
        span = wall1 - wall0
        figures.cpu_pct_per_stream = (cpu1 - cpu0) / span * 100 / streams
        figures.upstream_pct = (stats["cpu"] - up0) / span * 100
        others = (descendants_cpu(os.getpid()) - browser0) / span * 100  # Chromium, the upstream and the app
        figures.browser_pct = others - figures.upstream_pct - (cpu1 - cpu0) / span * 100
        figures.load = os.getloadavg()[0]
        sent = {(t, n): at for t, n, at in stats["sent"]}
        figures.words_sent = sum(wall0 <= at <= wall1 for at in sent.values())
        for n, tab in enumerate(tabs):
            seen: dict[str, float] = evaluated(tab, "window.__lcSeen") or {}
            figures.reloads += (evaluated(tab, "performance.getEntriesByType('navigation').length") or 1) - 1
            for word, at in seen.items():
                left = sent.get((cids_tag(tag, n), int(word)))
                if left is not None and wall0 <= left <= wall1:
                    figures.dom_ms.append(at - left * 1000)
        for events in app.call("GET", f"/bench/received?n={max(watched, 1)}").values():
            for ts, text in events:
                found = WORD.search(text.encode())
                left = sent.get((found.group(1).decode(), int(found.group(2)))) if found else None
                if left is not None and wall0 <= left <= wall1:
                    figures.engine_ms.append((datetime.fromisoformat(ts).timestamp() - left) * 1000)
        rows = [[float(x) for x in row.split()] for row in lag_file.read_text().splitlines()]
        lags = [(lag, min(lag, ran)) for at, lag, ran, *_ in rows if wall0 <= at <= wall1]
        figures.block_ms = max((b for _, b in lags), default=0.0)
        figures.late_ms = max((lag for lag, _ in lags), default=0.0)
        if spy and streams > 1:
            out = str(tmp.parent / f"many-streams-{tag}-stop.stacks")
            args = ["record", "-p", str(app.proc.pid), "-d", "3", "-f", "raw", "-o", out, "-r", "1000"]
            subprocess.Popen([spy, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.5)  # py-spy attaches before the Stop (a start-up wait, not a synchronization)
        stop_at, stop_wall = time.monotonic(), time.time()
        stopped = app.call("POST", "/bench/stop")
        figures.stop_call_ms = (time.monotonic() - stop_at) * 1000
        figures.stop_began_ms = (stopped["began"] - stop_at) * 1000
        deadline = time.monotonic() + 10
        ended = upstream.ended()
        while any(e["closed_at"] is None for e in ended) and time.monotonic() < deadline:
            time.sleep(0.05)  # the poll interval of a condition wait (every upstream closed)
            ended = upstream.ended()
        figures.stop_ms = [(e["closed_at"] - stop_at) * 1000 for e in ended if e["closed_at"] and not e["finished"]]
        figures.unclosed = sum(e["closed_at"] is None for e in ended)
        closed = app.call("GET", "/bench/closed")
        figures.close_ms = [ms for values in closed.values() for ms, _ in values if ms is not None]
        stamps = [datetime.fromisoformat(ts).timestamp() for values in closed.values() for _, ts in values]
        figures.app_closed_ms = [(at - stop_wall) * 1000 for at in stamps]
        context.close()
    finally:
        app.stop()
    return figures


def evaluated(tab: Page, expression: str) -> Any:
    """``tab.evaluate``, again once the tab loaded if it was reloading (a lost websocket reloads the page: what it
    saw before is lost, and counted as a reload); None if it never answers."""
    for _ in range(3):
        try:
            return tab.evaluate(expression)
        except PlaywrightError:
            tab.wait_for_load_state()
    return None


def cids_tag(tag: str, n: int) -> str:
    return f"{tag}{n:03d}"


def line(label: str, single: str, many: str, target: str, ok: bool | None) -> None:
    verdict = "" if ok is None else ("PASS" if ok else "MISS")
    print(f"  {label:<38} {single:>16} {many:>22}   {target:<14} {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--watched", type=int, default=20)
    parser.add_argument("--rate", type=float, default=30.0)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--serve-upstream", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_upstream:
        serve_upstream(args.serve_upstream)
        return
    words = int(args.rate * (args.seconds + 60))  # every stream still runs when Stop is pressed
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        upstream = UpstreamProcess(args.rate, words, Path(tmp) / "upstream.log")
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        try:
            one = run(browser, upstream, Path(tmp), 1, 1, args.seconds, "a")
            many = run(browser, upstream, Path(tmp), args.streams, args.watched, args.seconds, "b")
        finally:
            browser.close()
            upstream.stop()
    print(
        f"many streams: {args.streams} conversations at {args.rate:g} chunks/s through one app, {args.watched} "
        f"watched in Chromium tabs, {args.seconds:g} s window, {os.cpu_count()} cores "
        f"(baseline: 1 stream, 1 tab, same run)"
    )
    line("", "1 stream", f"{args.streams} streams", "target", None)
    line("app CPU per stream (% of a core)", f"{one.cpu_pct_per_stream:.2f}%", f"{many.cpu_pct_per_stream:.2f}%",
         "-", None)  # fmt: skip
    line("app CPU, whole (% of a core)", f"{one.cpu_pct_per_stream:.0f}%",
         f"{many.cpu_pct_per_stream * args.streams:.0f}%", "-", None)  # fmt: skip
    for q, name in ((0.5, "p50"), (0.95, "p95")):
        line(f"chunk -> DOM {name} ({len(many.dom_ms)} words)", f"{pct(one.dom_ms, q):.0f} ms",
             f"{pct(many.dom_ms, q):.0f} ms", "<= 250 ms" if q > 0.9 else "-",
             pct(many.dom_ms, q) <= 250 if q > 0.9 else None)  # fmt: skip
    for q, name in ((0.5, "p50"), (0.95, "p95")):
        line(f"chunk -> the engine's ledger {name}", f"{pct(one.engine_ms, q):.0f} ms",
             f"{pct(many.engine_ms, q):.0f} ms", "-", None)  # fmt: skip
    line("Stop -> upstream closed, median", f"{pct(one.stop_ms, 0.5):.0f} ms", f"{pct(many.stop_ms, 0.5):.0f} ms",
         "<= 60 ms", pct(many.stop_ms, 0.5) <= 60)  # fmt: skip
    line("Stop -> upstream closed, p95", f"{pct(one.stop_ms, 0.95):.0f} ms", f"{pct(many.stop_ms, 0.95):.0f} ms",
         "<= 100 ms", pct(many.stop_ms, 0.95) <= 100)  # fmt: skip
    line("Stop request -> the app's handler runs", f"{one.stop_began_ms:.0f} ms", f"{many.stop_began_ms:.0f} ms",
         "-", None)  # fmt: skip
    line("Stop request -> every cancel returned", f"{one.stop_call_ms:.0f} ms", f"{many.stop_call_ms:.0f} ms", "-",
         None)  # fmt: skip
    line("Stop -> the app closed the stream, median", f"{pct(one.app_closed_ms, 0.5):.0f} ms",
         f"{pct(many.app_closed_ms, 0.5):.0f} ms", "-", None)  # fmt: skip
    line("Stop -> the app closed the stream, p95", f"{pct(one.app_closed_ms, 0.95):.0f} ms",
         f"{pct(many.app_closed_ms, 0.95):.0f} ms", "-", None)  # fmt: skip
    line("engine close_ms (cancel -> closed), p95", f"{pct(one.close_ms, 0.95):.0f} ms",
         f"{pct(many.close_ms, 0.95):.0f} ms", "-", None)  # fmt: skip
    line("event loop's longest block", f"{one.block_ms:.0f} ms", f"{many.block_ms:.0f} ms", "-", None)
    line("longest late wake-up (busy machine too)", f"{one.late_ms:.0f} ms", f"{many.late_ms:.0f} ms", "-", None)
    line("upstream process CPU (% of a core)", f"{one.upstream_pct:.0f}%", f"{many.upstream_pct:.0f}%", "-", None)
    line("Chromium CPU (% of a core)", f"{one.browser_pct:.0f}%", f"{many.browser_pct:.0f}%", "-", None)
    line("words sent in the window (all streams)", f"{one.words_sent}", f"{many.words_sent}", "-", None)
    line("load average at the window's end", f"{one.load:.1f}", f"{many.load:.1f}", "-", None)
    print(f"  (streams never closed after Stop: {many.unclosed}; closes counted: {len(many.stop_ms)})")
    print(
        f"  (words seen in the watched tabs: {len(many.dom_ms)}; single stream: {len(one.dom_ms)}; "
        f"tab reloads: {many.reloads})"
    )
    print(f"  (median chunk -> DOM of the single stream: {statistics.median(one.dom_ms or [0]):.0f} ms)")


if __name__ == "__main__":
    main()
