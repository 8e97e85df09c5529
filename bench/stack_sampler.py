"""A small in-process sampling profiler for the benches' app processes (py-spy is not installed here).

Guarantees: ``Sampler(seconds, every)`` samples every thread's Python stack (``sys._current_frames``) every
``every`` seconds for ``seconds`` in a daemon thread of its own, and the garbage collector's pauses (``gc.callbacks``),
without changing what it samples; ``summary(top)`` says, for the event loop's thread (the main thread), which
functions its busy samples were in (inclusive: anywhere on the stack; self: the innermost frame), a sample whose
innermost frame waits (``select``, a lock's ``wait``, uvloop's C loop under ``asyncio.run``) counting as idle,
the frames under every busy sample (the loop's start-up) left out; and for each other thread how often it was
busy, and where. Its own cost is one stack walk per thread per sample (about 1% of a core at 100 samples a second).
"""

from __future__ import annotations

import gc
import sys
import threading
import time
from collections import Counter
from typing import Any

__all__ = ["Sampler"]

IDLE = {"select", "wait", "poll", "sleep", "_wait_for_tstate_lock", "acquire", "accept", "get", "readline", "recv",
        "_worker"}  # fmt: skip
LOOP_RUN = "asyncio/runners.py:run"  # uvloop's loop runs in C under it: its own frame innermost is the loop waiting


def where(frame: Any) -> str:
    code = frame.f_code
    path = code.co_filename
    for marker in ("site-packages/", "/lib/python3.11/"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    else:
        path = "/".join(path.rsplit("/", 2)[-2:])
    return f"{path}:{code.co_name}"


class Sampler:
    def __init__(self, seconds: float, every: float = 0.01) -> None:
        self.seconds, self.every = seconds, every
        self.inclusive: Counter[str] = Counter()
        self.own: Counter[str] = Counter()
        self.busy: Counter[str] = Counter()
        self.others: Counter[str] = Counter()  # other threads' innermost frames
        self.samples: Counter[str] = Counter()
        self.gc_seconds = 0.0
        self._gc_started = 0.0
        self.done = threading.Event()
        gc.callbacks.append(self._gc)
        threading.Thread(target=self._run, name="stack sampler", daemon=True).start()

    def _gc(self, phase: str, _: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
        elif self._gc_started:
            self.gc_seconds += time.perf_counter() - self._gc_started

    def _run(self) -> None:
        main, me = threading.main_thread().ident, threading.get_ident()
        names = {t.ident: t.name for t in threading.enumerate()}
        end = time.monotonic() + self.seconds
        while time.monotonic() < end:
            for ident, frame in sys._current_frames().items():
                if ident == me:
                    continue
                name = "event loop" if ident == main else names.get(ident) or "thread"
                self.samples[name] += 1
                leaf = where(frame)
                if frame.f_code.co_name in IDLE or leaf == LOOP_RUN:
                    continue
                self.busy[name] += 1
                if ident != main:
                    self.others[f"{name}: {leaf}"] += 1
                    continue
                self.own[leaf] += 1
                seen: set[str] = set()
                walked: Any = frame
                while walked is not None:
                    seen.add(where(walked))
                    walked = walked.f_back
                self.inclusive.update(seen)
            time.sleep(self.every)  # the sampling interval
            if len(names) < len(sys._current_frames()):
                names = {t.ident: t.name for t in threading.enumerate()}
        gc.callbacks.remove(self._gc)
        self.done.set()

    def summary(self, top: int = 25) -> dict[str, Any]:
        loop_busy = max(self.busy["event loop"], 1)
        return {
            "seconds": self.seconds,
            "gc_seconds": round(self.gc_seconds, 3),
            "threads": {n: [self.busy[n], self.samples[n]] for n in self.samples},
            "others": [[f, c] for f, c in self.others.most_common(8)],
            "busy": self.busy["event loop"],
            "inclusive": [
                [f, round(c / loop_busy, 3)] for f, c in self.inclusive.most_common(top + 20) if c < 0.99 * loop_busy
            ][:top],
            "self": [[f, round(c / loop_busy, 3)] for f, c in self.own.most_common(top)],
        }
