"""One measured run of the many-streams bench (``bench.many_streams_bench``): one app, N streams, its watchers.

Guarantees: ``run`` starts ``bench.many_streams_app`` from the checkout it is given against the upstream process
(``bench.stream_upstream``), creates ``streams`` conversations, opens conversation 0 in one Chromium tab (a
MutationObserver stamps each word as it reaches the DOM) and conversations 0..``watchers``-1 in the socket
watchers' process (``bench.watchers``: the tab's conversation has a watcher too, so each run shows a watcher
receiving what the tab receives), sends every conversation its prompt, lets the streams settle and then, over a
window of ``seconds``, reads the app process's CPU (``/proc``) and the words the upstream sent. Right after the
window it presses Stop in every conversation at once (the engine's cancel, the Stop button's path) and reads when
the app recorded each ``upstream_closed`` and when the upstream saw each stream close; then the ledger's ``chunk``
stamps give the engine's lag behind the upstream for every word of every stream sent in the window. Clocks: wall
clock for words and ledger stamps (every process on this machine), ``time.monotonic`` for the upstream's closes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, Page
from playwright.sync_api import Error as PlaywrightError

from bench.stream_bench import cpu_seconds
from bench.stream_upstream import WORD, UpstreamProcess
from bench.watchers import WatcherProcess
from tests.support.app_process import FAKE_KEY, READY_LINE, ROOT, free_port

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
SETTLE = 2.0  # seconds after the prompts before the window opens: every stream has reached its pace


class BenchApp:
    """``bench.many_streams_app`` from ``root`` on a free port, its event loop sampled into ``lag_file``."""

    def __init__(self, data_dir: Path, api_base: str, lag_file: Path, root: Path) -> None:
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
        import json
        import urllib.request

        request = urllib.request.Request(self.url + path, method=method, data=b"" if method == "POST" else None)
        with urllib.request.urlopen(request, timeout=300) as response:
            return json.loads(response.read())

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@dataclass
class Figures:
    streams: int
    seconds: float
    app_cpu: float = 0.0  # the app process's CPU seconds in the window
    loop_cpu: float = 0.0  # of which its event loop's thread (the main thread)
    words_sent: int = 0  # chunks the upstream sent in the window, all streams
    engine_ms: list[float] = field(default_factory=list)  # upstream sent -> the ledger's chunk, every stream
    dom_ms: list[float] = field(default_factory=list)  # upstream sent -> the tab's DOM
    watcher_ms: list[float] = field(default_factory=list)  # upstream sent -> a watcher received it
    app_closed_ms: list[float] = field(default_factory=list)  # Stop -> the ledger's upstream_closed
    upstream_ms: list[float] = field(default_factory=list)  # Stop -> the upstream saw the stream close
    unclosed: int = 0
    block_ms: float = 0.0
    late_ms: float = 0.0
    upstream_pct: float = 0.0
    watchers_pct: float = 0.0
    browser_pct: float = 0.0
    load: float = 0.0
    tab: tuple[int, int] = (0, 0)  # socket.io messages and bytes the tab received
    twin: tuple[int, int] = (0, 0)  # the same for the watcher of the tab's conversation
    watched: tuple[int, int, int] = (0, 0, 0)  # all watchers: messages, bytes, watchers that saw no word
    disconnects: int = 0
    reloads: int = 0

    @property
    def us_per_chunk(self) -> float:
        return self.app_cpu / max(self.words_sent, 1) * 1e6


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def descendants_cpu(root: int) -> float:
    """CPU seconds of every live process under ``root`` (the app, the upstream, the watchers, Playwright's driver
    and the Chromium it runs)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
    total, todo = 0.0, [pid for pid, parent in parents.items() if parent == root]
    while todo:
        pid = todo.pop()
        try:
            total += cpu_seconds(pid)
        except OSError:
            continue
        todo += [child for child, parent in parents.items() if parent == pid]
    return total


def thread_cpu(pid: int) -> float:
    """CPU seconds of the process's main thread (the event loop's), from ``/proc/<pid>/task/<pid>/stat``."""
    fields = Path(f"/proc/{pid}/task/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def evaluated(tab: Page, expression: str) -> Any:
    """``tab.evaluate``, again once the tab loaded if it was reloading (a lost websocket reloads the page: what it
    saw before is lost, and counted as a reload); None if it never answers."""
    for _ in range(3):
        try:
            return tab.evaluate(expression)
        except PlaywrightError:
            tab.wait_for_load_state()
    return None


def open_tab(browser: Browser, url: str, frames: list[int]) -> Page:
    """The chat at ``url`` in a tab of its own; ``frames`` counts the socket.io messages it receives and their
    bytes (``42...`` frames: engine.io's pings are not messages)."""

    def count(payload: str | bytes) -> None:
        if isinstance(payload, str) and payload.startswith("42"):
            frames[0] += 1
            frames[1] += len(payload[1:].encode())

    tab = browser.new_context(viewport={"width": 1000, "height": 800}).new_page()
    tab.set_default_timeout(60_000)
    tab.on("websocket", lambda ws: ws.on("framereceived", count))
    tab.add_init_script(f"({SEEN_JS})()")  # on every load: a reload (a lost websocket) starts over
    tab.goto(url)
    tab.get_by_label("Message").wait_for()
    return tab


def run(browser: Browser, upstream: UpstreamProcess, tmp: Path, streams: int, watchers: int, seconds: float,
        tag: str, root: Path = ROOT, profile: Path | None = None) -> Figures:  # fmt: skip
    """One measured run of the app in ``root`` (this checkout, or an older one to compare); with ``profile``, its
    loop's thread is under cProfile in the window and in the Stop, written to ``profile`` + ``-window`` and
    ``-stop`` (its figures then count the profiler's cost too)."""
    lag_file = tmp / f"lag-{tag}.txt"
    lag_file.touch()
    app = BenchApp(tmp / f"data-{tag}", upstream.base, lag_file, root)
    figures, frames = Figures(streams, seconds), [0, 0]
    tab: Page | None = None
    watching: WatcherProcess | None = None
    try:
        upstream.reset()
        cids = app.call("POST", f"/bench/create?n={streams}&tag={tag}")["cids"]
        tab = open_tab(browser, f"{app.url}/chat/{cids[0]}", frames)
        watching = WatcherProcess(app.url, cids[:watchers], tmp / f"watchers-{tag}.log") if watchers else None
        app.call("POST", f"/bench/send?tag={tag}")  # the tab and the watchers see every stream from its start
        time.sleep(SETTLE)  # a settling time before the window, not a synchronization
        if profile:
            app.call("POST", "/bench/cprofile")
        others0 = descendants_cpu(os.getpid())
        watch0 = cpu_seconds(watching.proc.pid) if watching else 0.0
        loop0 = thread_cpu(app.proc.pid)
        up0, cpu0, wall0 = cpu_seconds(upstream.proc.pid), cpu_seconds(app.proc.pid), time.time()
        time.sleep(seconds)  # the measuring window itself
        cpu1, wall1, up1 = cpu_seconds(app.proc.pid), time.time(), cpu_seconds(upstream.proc.pid)
        figures.loop_cpu = thread_cpu(app.proc.pid) - loop0
        watch1 = cpu_seconds(watching.proc.pid) if watching else 0.0
        others1 = descendants_cpu(os.getpid())
        span = wall1 - wall0
        figures.app_cpu, figures.load = cpu1 - cpu0, os.getloadavg()[0]
        figures.upstream_pct, figures.watchers_pct = (up1 - up0) / span * 100, (watch1 - watch0) / span * 100
        figures.browser_pct = (others1 - others0) / span * 100 - figures.upstream_pct - figures.watchers_pct
        figures.browser_pct -= figures.app_cpu / span * 100
        seen: dict[str, float] = evaluated(tab, "window.__lcSeen") or {}
        figures.reloads = (evaluated(tab, "performance.getEntriesByType('navigation').length") or 1) - 1
        report = watching.report() if watching else {"watchers": {}}
        figures.tab = (frames[0], frames[1])
        if profile:
            app.call("POST", f"/bench/cprofile?dump={profile}-window")
            app.call("POST", "/bench/cprofile")
        stop(app, upstream, figures)
        if profile:
            app.call("POST", f"/bench/cprofile?dump={profile}-stop")
        sent = {(t, n): at for t, n, at in upstream.stats()["sent"]}
        figures.words_sent = sum(wall0 <= at <= wall1 for at in sent.values())

        def lag(conversation: int, word: int, at: float) -> None | float:
            left = sent.get((f"{tag}{conversation:03d}", word))
            return (at - left) * 1000 if left is not None and wall0 <= left <= wall1 else None

        figures.dom_ms = [ms for w, at in seen.items() if (ms := lag(0, int(w), at / 1000)) is not None]
        words = 0
        for n, cid in enumerate(cids[:watchers]):
            one = report["watchers"][cid]
            figures.watcher_ms += [ms for w, at in one["words"].items() if (ms := lag(n, int(w), at)) is not None]
            figures.twin = (one["messages"], one["bytes"]) if n == 0 else figures.twin
            figures.disconnects += one["disconnects"]
            words += not one["words"]
            figures.watched = (figures.watched[0] + one["messages"], figures.watched[1] + one["bytes"], words)
        for n, events in enumerate(app.call("GET", f"/bench/received?n={streams}").values()):
            for ts, text in events:
                found = WORD.search(text.encode())
                at = datetime.fromisoformat(ts).timestamp()
                if found and (ms := lag(n, int(found.group(2)), at)) is not None:
                    figures.engine_ms.append(ms)
        rows = [[float(x) for x in row.split()] for row in lag_file.read_text().splitlines()]
        lags = [(late, min(late, ran)) for at, late, ran, *_ in rows if wall0 <= at <= wall1]
        figures.block_ms = max((b for _, b in lags), default=0.0)
        figures.late_ms = max((late for late, _ in lags), default=0.0)
    finally:
        if watching:
            watching.stop()
        if tab:
            tab.context.close()
        app.stop()
    return figures


def stop(app: BenchApp, upstream: UpstreamProcess, figures: Figures) -> None:
    """Stop in every conversation at once; when the app recorded each close and when the upstream saw it."""
    stop_at, stop_wall = time.monotonic(), time.time()
    app.call("POST", "/bench/stop")
    deadline = time.monotonic() + 10
    ended = upstream.ended()
    while any(e["closed_at"] is None for e in ended) and time.monotonic() < deadline:
        time.sleep(0.05)  # the poll interval of a condition wait (every upstream closed)
        ended = upstream.ended()
    figures.upstream_ms = [(e["closed_at"] - stop_at) * 1000 for e in ended if e["closed_at"] and not e["finished"]]
    figures.unclosed = sum(e["closed_at"] is None for e in ended)
    closed = app.call("GET", "/bench/closed")
    stamps = [datetime.fromisoformat(ts).timestamp() for values in closed.values() for _, ts in values]
    figures.app_closed_ms = [(at - stop_wall) * 1000 for at in stamps]
