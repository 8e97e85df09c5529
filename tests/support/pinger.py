"""``Pinger``: threads that load a server's front page (``GET /``) again and again while a scenario runs, and keep
how long each load took, so a test can say the page kept answering "throughout" and how fast.

Guarantees: each named address is loaded every ``every`` seconds by a thread of its own (one load at a time per
address, each with its own connection, as a person's browser opening the app, timed from the request's start
to its answer; a slow one never delays another's);
a load that fails, times out (``TIMEOUT``) or answers other than 200 is kept as such, never dropped; ``pause(name)``
stops loading that address (a frozen process cannot answer, by design; it returns once no load of it is in flight)
until ``resume(name)``; ``stop()`` ends the threads and returns every load, in the order they ended.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import httpx

TIMEOUT = 20.0  # seconds: a load slower than this is kept as failed


@dataclass(frozen=True, slots=True)
class Load:
    name: str
    at: float  # time.monotonic() when it was sent
    seconds: float
    status: int | None  # None: no answer (refused, reset, timed out)
    phase: str  # what the scenario was doing when it was sent (``Pinger.phase``)


class Pinger:
    def __init__(self, targets: dict[str, str], every: float = 0.5) -> None:
        self.targets, self.every = targets, every
        self.loads: list[Load] = []
        self.phase = ""  # set by the scenario as it goes: kept with each load
        self._paused: set[str] = set()
        self._inflight: set[str] = set()
        self._lock = threading.Condition()
        self._done = threading.Event()
        self._threads = [
            threading.Thread(target=self._run, args=(name, url), name=f"pinger-{name}", daemon=True)
            for name, url in targets.items()
        ]  # one per address: a slow load of one never delays the loads of another

    def __enter__(self) -> Pinger:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def pause(self, name: str) -> None:
        """No new load of ``name``; returns once none is in flight (so it can be frozen now)."""
        with self._lock:
            self._paused.add(name)
            self._lock.wait_for(lambda: name not in self._inflight, TIMEOUT + 5)

    def resume(self, name: str) -> None:
        with self._lock:
            self._paused.discard(name)

    def stop(self) -> list[Load]:
        self._done.set()
        for thread in self._threads:
            if thread.is_alive():
                thread.join(TIMEOUT + 5)
        with self._lock:
            return list(self.loads)

    def _run(self, name: str, url: str) -> None:
        while not self._done.is_set():
            started = time.monotonic()
            with self._lock:
                paused = name in self._paused
                if not paused:
                    self._inflight.add(name)
            if not paused:
                load = self._load(name, url, self.phase)
                with self._lock:
                    self.loads.append(load)
                    self._inflight.discard(name)
                    self._lock.notify_all()
            self._done.wait(max(0.0, self.every - (time.monotonic() - started)))

    @staticmethod
    def _load(name: str, url: str, phase: str) -> Load:
        # the client is made before the clock starts: making one loads certificates (30 ms on an idle machine,
        # several times that on a loaded one), which is this process's time, not the server's
        with httpx.Client(timeout=TIMEOUT) as client:
            at = time.monotonic()
            try:
                status: int | None = client.get(url + "/").status_code
            except httpx.HTTPError:
                status = None
            return Load(name, at, time.monotonic() - at, status, phase)


def slowest(loads: list[Load]) -> str:
    """The slowest load of each address, in words, with the phase it was sent in (for a failure and the record)."""
    by: dict[str, Load] = {}
    for load in loads:
        if load.name not in by or load.seconds > by[load.name].seconds:
            by[load.name] = load
    count = {n: sum(1 for y in loads if y.name == n) for n in by}
    return ", ".join(f"{n}: {round(x.seconds * 1000)} ms ({x.phase}) of {count[n]}" for n, x in by.items())
