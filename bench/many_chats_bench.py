"""Many chats (not a test): the real app on a data folder of 10,000 conversations x 20 turns, in headless Chromium.

    .venv/bin/python -m bench.many_chats_bench [--conversations 10000] [--turns 20]

The folder comes from ``bench/make_chats.py`` (cached; each run works on a private copy, since the app may write).
The same figures are measured for an empty folder in the same run, as the baseline. Prints, with the issue's
targets:
- start-up to serving: process start until ``GET /`` is answered (target <= 3 s);
- ``GET /``: median of 10, time and size (targets <= 150 ms, <= 150 KB);
- opening a 200-turn conversation: ``goto`` until its last answer's text is on screen (target <= 500 ms);
- switching chats in place: click in the list until the other chat's last answer is on screen, median of 10
  (target <= 200 ms);
- the app's resident memory (RSS) after one page, after 20 tabs on 20 conversations, and after closing them and
  NiceGUI releasing their clients (target: back within 50 MB of the first figure);
- the app's CPU while those 20 tabs sit idle for ``IDLE_SECONDS`` (no target: an idle page should cost nothing).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import Page, expect, sync_playwright

from bench.make_chats import fresh_copy, long_ids
from bench.stream_bench import cpu_seconds
from tests.support.app_process import CHROMIUM_ARGS, AppProcess

ANSWER = ".lc-assistant .lc-body"
IDLE_SECONDS = 10.0


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def get_root(url: str) -> tuple[float, int]:
    started = time.perf_counter()
    with urllib.request.urlopen(url + "/", timeout=30) as response:
        size = len(response.read())
    return (time.perf_counter() - started) * 1000, size


def started_app(data_dir: Path) -> tuple[AppProcess, float]:
    app = AppProcess(data_dir, None, "--no-tools")
    started = time.perf_counter()
    app.start(timeout=120, loaded=False)
    return app, time.perf_counter() - started


def settled_rss(pid: int, at_least: float = 3.0, timeout: float = 60.0) -> float:
    """RSS once it held still (within 1 MB) for 3 s, sampled for ``at_least`` seconds: background work (litellm's
    import) and page releases done."""
    samples: list[float] = []
    least = int(at_least / 0.5)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not (
        len(samples) >= max(6, least) and max(samples[-6:]) - min(samples[-6:]) < 1
    ):
        time.sleep(0.5)
        samples.append(rss_mb(pid))
    return samples[-1]


def open_ms(page: Page, url: str) -> float:
    started = time.perf_counter()
    page.goto(url)
    expect(page.locator(ANSWER).last).not_to_be_empty(timeout=30_000)
    return (time.perf_counter() - started) * 1000


def open_ms_empty(page: Page, url: str) -> float:
    """A full load of the empty page in the same browser: the floor of any ``goto``."""
    started = time.perf_counter()
    page.goto(url + "/")
    expect(page.get_by_label("Message")).to_be_visible()
    return (time.perf_counter() - started) * 1000


def switch_ms(page: Page, cid: str) -> float:
    """Click ``cid`` in the list; time until its last answer replaced the one shown."""
    shown = page.locator(ANSWER)
    before = shown.last.inner_text() if shown.count() else ""
    item = page.locator(f"[data-conversation='{cid}']")
    started = time.perf_counter()
    item.click()
    page.wait_for_function(
        "before => { const b = [...document.querySelectorAll('.lc-assistant .lc-body')].pop();"
        " return b && b.innerText.trim() && b.innerText !== before; }",
        arg=before,
    )
    return (time.perf_counter() - started) * 1000


def listed(page: Page) -> list[str]:
    return [
        str(c) for c in page.locator("[data-conversation]").evaluate_all("els => els.map(e => e.dataset.conversation)")
    ]


def measure(data_dir: Path, label: str, browser) -> dict[str, float]:
    app, startup = started_app(data_dir)
    try:
        assert app.proc is not None
        gets = [get_root(app.url) for _ in range(10)]
        figures = {"startup_s": startup, "get_ms": statistics.median(g[0] for g in gets), "get_kb": gets[-1][1] / 1024}
        context = browser.new_context(viewport={"width": 1200, "height": 900})
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.goto(app.url + "/")
        expect(page.get_by_label("Message")).to_be_visible()
        figures["rss_start_mb"] = settled_rss(app.proc.pid)
        cids = listed(page)
        if cids:
            figures["open_long_ms"] = open_ms(page, f"{app.url}/chat/{long_ids(5)[0]}")
            page.get_by_label("Filter chats by title").fill(long_ids(5)[1])  # another 200-turn chat, from the list
            page.wait_for_function("() => document.querySelectorAll('[data-conversation]').length === 1")
            figures["switch_long_ms"] = switch_ms(page, long_ids(5)[1])
            page.get_by_label("Filter chats by title").fill("")
            page.wait_for_function("() => document.querySelectorAll('[data-conversation]').length > 1")
            figures["empty_page_ms"] = open_ms_empty(page, app.url)
            shown = listed(page)
            figures["switch_ms"] = statistics.median(switch_ms(page, cid) for cid in shown[1:11])
            tabs = []
            for cid in cids[:20]:
                tab = context.new_page()
                tab.goto(f"{app.url}/chat/{cid}")
                expect(tab.locator(ANSWER).last).not_to_be_empty(timeout=30_000)
                tabs.append(tab)
            figures["rss_20_tabs_mb"] = rss_mb(app.proc.pid)
            figures["idle_cpu_pct"] = idle_cpu_pct(app.proc.pid)
            for tab in tabs:
                tab.close()
            context.close()
            # NiceGUI deletes a client reconnect_timeout (3 s) after its socket closed; the app gives memory back
            # within 5 s of that
            figures["rss_after_mb"] = settled_rss(app.proc.pid, at_least=15)
        else:
            context.close()
        print(f"  {label}: " + ", ".join(f"{k} {v:,.1f}" for k, v in figures.items()), flush=True)
        return figures
    finally:
        app.stop()


def idle_cpu_pct(pid: int) -> float:
    """The app's CPU, in percent of one core, over ``IDLE_SECONDS`` while its open tabs do nothing."""
    cpu0 = cpu_seconds(pid)
    time.sleep(IDLE_SECONDS)  # the measuring window itself, not a wait for something to happen
    return (cpu_seconds(pid) - cpu0) / IDLE_SECONDS * 100


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=20)
    args = parser.parse_args()
    many = fresh_copy(args.conversations, args.turns)
    empty = Path(tempfile.mkdtemp(prefix="ledger-empty-")) / "data"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            base = measure(empty, "empty folder", browser)
            fig = measure(many, f"{args.conversations:,} x {args.turns} turns", browser)
            browser.close()
    finally:
        shutil.rmtree(many, ignore_errors=True)
        shutil.rmtree(empty.parent, ignore_errors=True)
    back = fig["rss_after_mb"] - fig["rss_start_mb"]
    rows = [
        (
            "start-up to serving",
            f"{fig['startup_s']:.2f} s (empty: {base['startup_s']:.2f} s)",
            "<= 3 s",
            fig["startup_s"] <= 3,
        ),
        ("GET / time", f"{fig['get_ms']:.0f} ms (empty: {base['get_ms']:.0f} ms)", "<= 150 ms", fig["get_ms"] <= 150),
        ("GET / size", f"{fig['get_kb']:.0f} KB (empty: {base['get_kb']:.0f} KB)", "<= 150 KB", fig["get_kb"] <= 150),
        (
            "open a 200-turn chat (URL)",
            f"{fig['open_long_ms']:.0f} ms (an empty page's load: {fig['empty_page_ms']:.0f} ms)",
            "<= 500 ms",
            fig["open_long_ms"] <= 500,
        ),
        ("open a 200-turn chat (list)", f"{fig['switch_long_ms']:.0f} ms", "<= 500 ms", fig["switch_long_ms"] <= 500),
        ("switch chats in place", f"{fig['switch_ms']:.0f} ms (median of 10)", "<= 200 ms", fig["switch_ms"] <= 200),
        (
            "RSS: start, 20 tabs, closed",
            f"{fig['rss_start_mb']:.0f} / {fig['rss_20_tabs_mb']:.0f} / {fig['rss_after_mb']:.0f} MB ({back:+.0f} MB)",
            "within 50 MB",
            back <= 50,
        ),
    ]
    print()
    for name, figure, target, ok in rows:
        print(f"{name:<28} {figure:<48} target {target:<12} {verdict(ok)}")
    print(
        f"(the app's CPU while the 20 tabs sat idle for {IDLE_SECONDS:.0f} s: {fig['idle_cpu_pct']:.1f}% of one core)"
    )


if __name__ == "__main__":
    main()
