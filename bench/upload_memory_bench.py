"""Upload memory benchmark (not a test): the issue 42 image, a 0.4 MB PNG of 7999×7999 at 16 bits per channel,
uploaded to the real app once and then 10 at once, while a page is fetched over and over.

    nice -n 10 .venv/bin/python -m bench.upload_memory_bench

Starts the real app (``python main.py``, the demo model, its own data folder, loopback) and reads the app
process's memory from ``/proc``: the peak (``VmHWM``, reset before each phase through ``clear_refs``) and the
resident size once the uploads ended. Three phases: one upload, then 10 at once (memory only: no page is fetched,
each page would leave a NiceGUI client in memory for a while), then 10 at once while ``GET /`` is fetched over
and over. Prints the peak RSS growth over the settled baseline (per accepted upload for the burst), the RSS left
afterwards, each upload's answer time, ``GET /`` latency while they ran (p50/p95; the issue's bar: p95 under 300
ms), and the event loop's longest late wake-up with the CPU its thread ran meanwhile (``app.probes``: a block is
told from a machine too busy to run the process). For comparison, the
issue measured before the budget: one upload 0.32 → 1.07 GB peak, six at once 4.8 GB peak, 3.6 GB left, and a
trivial request 18.8 s.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from tests.support.app_process import AppProcess
from tests.support.big_png import flat_png

BURST = 10
MB = 1024 * 1024


def status(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def reset_peak(pid: int) -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # VmHWM := VmRSS


def upload(app: AppProcess, data: bytes, n: int) -> tuple[int, float]:
    started = time.perf_counter()
    with httpx.Client(base_url=app.url, timeout=300, headers={"origin": app.url}) as http:
        answer = http.post("/files", files=[("file", (f"scan-{n}.png", data))])
    return answer.status_code, time.perf_counter() - started


def page_latencies(app: AppProcess, stop: threading.Event) -> list[float]:
    seen: list[float] = []
    with httpx.Client(base_url=app.url, timeout=60) as http:
        while not stop.is_set():
            started = time.perf_counter()
            assert http.get("/").status_code == 200
            seen.append((time.perf_counter() - started) * 1000)
    return seen


def phase(app: AppProcess, pid: int, data: bytes, count: int, *, pages: bool, lags: Path) -> None:
    baseline = status(pid, "VmRSS")
    reset_peak(pid)
    lags.write_text("")
    stop = threading.Event()
    with ThreadPoolExecutor(count + 1) as pool:
        fetching = pool.submit(page_latencies, app, stop) if pages else None
        answers = list(pool.map(lambda n: upload(app, data, n), range(count)))
        stop.set()
        latencies = fetching.result() if fetching is not None else []
    peak = status(pid, "VmHWM")
    after = status(pid, "VmRSS")
    codes = sorted({code for code, _ in answers})
    times = sorted(t for _, t in answers)
    meanwhile = " with GET / meanwhile" if pages else ""
    print(f"{count} upload(s) at once{meanwhile}: answers {codes}, {times[0]:.1f}-{times[-1]:.1f} s each")
    growth = peak - baseline
    print(
        f"  RSS before {baseline:.0f} MB, peak {peak:.0f} MB (+{growth:.0f} MB, +{growth / count:.0f} MB per upload), "
        f"after {after:.0f} MB"
    )
    if latencies:
        p95 = statistics.quantiles(latencies, n=20)[-1] if len(latencies) >= 20 else max(latencies)
        median = statistics.median(latencies)
        print(
            f"  GET / during them: {len(latencies)} fetches, p50 {median:.0f} ms, p95 {p95:.0f} ms, "
            f"max {max(latencies):.0f} ms (bar: p95 < 300 ms)"
        )
    late = [tuple(map(float, line.split()[1:3])) for line in lags.read_text().splitlines() if line.strip()]
    if late:
        lag, cpu = max(late)
        print(f"  the loop's longest late wake-up: {lag:.0f} ms (its thread ran {cpu:.0f} ms of CPU meanwhile)")


def main() -> None:
    data = flat_png(7999, 7999, channels=3, bits=16)
    print(f"image: 7999×7999 RGB at 16 bits per channel, {len(data) / MB:.2f} MB of file, 384 MB decoded as declared")
    with tempfile.TemporaryDirectory() as folder:
        lags = Path(folder) / "loop-lag.txt"
        os.environ["LC_LOOP_LAG_FILE"] = str(lags)  # app.probes, in the app process
        app = AppProcess(Path(folder) / "data", None).start()
        try:
            assert app.proc is not None
            pid = app.proc.pid
            with httpx.Client(base_url=app.url, timeout=60) as http:
                for _ in range(5):
                    http.get("/")  # warm: the page's first renders are not the uploads' cost
            phase(app, pid, data, 1, pages=False, lags=lags)
            phase(app, pid, data, BURST, pages=False, lags=lags)
            phase(app, pid, data, BURST, pages=True, lags=lags)
        finally:
            app.stop()


if __name__ == "__main__":
    main()
