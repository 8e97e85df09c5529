"""The process's memory policy: after pages went away, their cycles are collected and the freed memory is given
back to the system (``malloc_trim``, where the C library has it), so the process shrinks back after a burst of tabs
instead of keeping its peak; and the collector runs rarely enough that streaming is not mostly collecting.

Guarantees: the full collection (which holds the event loop for as long as it walks the pages' objects, tens of ms
after many tabs) runs only once no answer streams here (``busy`` is False); it runs once per drop in the number
of pages, however many checks come before it may. Python's own full collections still come when they are due.
``collect_less_often`` (called once start-up froze what it made) sets the collector's thresholds to ``THRESHOLDS``:
with Python's default (a young collection every 700 new container objects), 100 engine streams at 30 chunks a second
cost 172-215 µs of CPU per chunk, with 10,000 134-143 µs (each chunk makes a few short-lived objects that reference
counting frees anyway; docs/measured.md). Cycles are still collected, a little later: at most 10,000 young
objects more wait for their collection. ``drop_unconnected_pages`` (every 5 s) keeps pages that no browser
connected to from living a minute.
"""

from __future__ import annotations

import ctypes
import gc
import sys
from collections.abc import Callable

# young, middle, old: Python's default is (700, 10, 10). The middle one is small so that a middle collection walks
# at most ~30,000 objects (with 20 it walked up to 210,000 after a burst of pages: 190-215 ms on the event loop on
# a loaded machine, issue 40's GET / over 300 ms); the old one is large so that old collections are asked for
# exactly as often as before (every 10,000 x 2 x 200 = 4 million new objects, as with 10,000 x 20 x 20).
THRESHOLDS = (10_000, 2, 200)
UNCONNECTED_SECONDS = 20.0  # a page whose browser never connected its socket is dropped after this long


def collect_less_often() -> None:
    gc.set_threshold(*THRESHOLDS)


def drop_unconnected_pages() -> None:
    """Drop the pages built for a request whose browser never connected (a health check, a crawler, a tab closed
    while loading) once ``UNCONNECTED_SECONDS`` old; NiceGUI keeps them 60 s, and a probe loading ``/`` twice a
    second kept 120 pages alive, whose objects every full collection walked (issue 40: 0.4 s collections on the
    event loop, ``GET /`` 0.5-0.7 s meanwhile). A browser connects within a second or two; one that comes later
    finds its page gone and reloads it (NiceGUI's own behaviour for a page it no longer holds)."""
    from nicegui import Client

    Client.prune_instances(client_age_threshold=UNCONNECTED_SECONDS)


class MemoryGiver:
    def __init__(self, busy: Callable[[], bool], pages: Callable[[], int]) -> None:
        self.busy = busy
        self.pages = pages
        self.clients = 0
        self.due = False
        self.trim = getattr(ctypes.CDLL(None), "malloc_trim", None) if sys.platform == "linux" else None

    def check(self) -> None:
        now = self.pages()
        self.due = self.due or now < self.clients
        self.clients = now
        if self.due and not self.busy():
            self.due = False
            gc.collect()
            if self.trim is not None:
                self.trim(0)
