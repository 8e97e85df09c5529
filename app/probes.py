"""Opt-in measurement for the benches, off unless an environment variable names a file.

- ``LC_LOOP_LAG_FILE``: the event loop is sampled every 5 ms; each wake-up over 2 ms late appends
  ``wall_time lag_ms cpu_ms process_cpu_ms`` (cpu: what the loop's thread ran meanwhile, process_cpu: what all the
  process's threads ran, so a block, by the loop or by a thread holding the interpreter lock, is told from a
  machine too busy to run the process).
- ``LC_GC_FILE``: every garbage collection over 1 ms of its thread's CPU appends ``wall_time generation cpu_ms
  objects_in_gen2`` (``objects_in_gen2``: what a full one left tracked; -1 after a young one).
- ``LC_PROFILE_FILE``: the loop's thread is profiled (cProfile, CPU time) from start-up to shutdown.

A ``{pid}`` in a file's name is replaced by the process id (several instances of one test, a file each).
"""

from __future__ import annotations

import asyncio
import gc
import os
import time
from typing import Any


def probes(app: Any) -> None:
    from nicegui import background_tasks

    lag_file, profile_file = _named("LC_LOOP_LAG_FILE"), _named("LC_PROFILE_FILE")
    if lag_file:

        async def sample() -> None:
            loop = asyncio.get_running_loop()
            with open(lag_file, "a", buffering=1) as out:
                while True:
                    started, cpu, all_cpu = loop.time(), time.thread_time(), time.process_time()
                    await asyncio.sleep(0.005)
                    late = (loop.time() - started - 0.005) * 1000
                    if late > 2:  # and how much of it the loop's thread ran (not waiting for a busy machine)
                        ran, all_ran = (time.thread_time() - cpu) * 1000, (time.process_time() - all_cpu) * 1000
                        out.write(f"{time.time():.3f} {late:.1f} {ran:.1f} {all_ran:.1f}\n")

        app.on_startup(lambda: background_tasks.create(sample(), name="loop lag sampler"))
    if gc_file := _named("LC_GC_FILE"):
        gc_probe(gc_file)
    if profile_file:
        import cProfile

        profile = cProfile.Profile(time.thread_time)  # CPU time: a busy machine does not count

        def dump() -> None:
            profile.disable()
            profile.dump_stats(profile_file)

        app.on_startup(profile.enable)
        app.on_shutdown(dump)


def gc_probe(path: str) -> None:
    out = open(path, "a", buffering=1)  # noqa: SIM115 - open for the life of the process
    started = [0.0]

    def timed(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.thread_time()
            return
        ms = (time.thread_time() - started[0]) * 1000
        if ms > 1:
            gen = info["generation"]
            old = len(gc.get_objects(2)) if gen == 2 else -1
            out.write(f"{time.time():.3f} {gen} {ms:.1f} {old}\n")

    gc.callbacks.append(timed)


def _named(variable: str) -> str | None:
    path = os.environ.get(variable)
    return path.replace("{pid}", str(os.getpid())) if path else None
