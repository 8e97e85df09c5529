"""Waiting in tests: on a condition (an event in the ledger, a DOM state, a counter), never a fixed sleep.

``wait_until`` (async) and ``wait_until_blocking`` (for the synchronous browser and process tests) poll a
condition and fail with what was awaited; ``wait_until_playwright`` does the same for a condition that Playwright's
own callbacks (a ``page.route`` handler, a ``page.on`` listener) make true, so it polls inside Playwright;
``nothing_more_for`` / ``nothing_more_for_blocking`` are the one named "nothing more appears" window: the caller
asserts afterwards that nothing changed during it; ``idle_for`` is a scenario's own timing (how long a fault lasts).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from playwright.sync_api import Page

T = TypeVar("T")
POLL = 0.005


async def wait_until(condition: Callable[[], T], timeout: float = 10.0, what: str = "condition") -> T:
    """Return the condition's first truthy value; fail after ``timeout`` seconds naming ``what``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = condition()
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"{what} not met within {timeout} s")
        await asyncio.sleep(POLL)  # the poll interval of a condition wait, not a synchronization sleep


def wait_until_blocking(
    condition: Callable[[], T],
    timeout: float = 10.0,
    what: str = "condition",
    pause: Callable[[], object] | None = None,
) -> T:
    """Return the condition's first truthy value, polling every ``POLL * 4`` s (``pause``: the caller's own way to
    wait that long); fail after ``timeout`` seconds naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not met within {timeout} s")
        if pause is None:
            time.sleep(POLL * 4)  # the poll interval of a condition wait, not a synchronization sleep
        else:
            pause()


def wait_until_playwright(page: Page, condition: Callable[[], T], timeout: float = 10.0, what: str = "condition") -> T:
    """``wait_until_blocking`` for a condition set by Playwright's callbacks: they run only while Playwright is
    called, so the poll is Playwright's own wait."""
    return wait_until_blocking(condition, timeout, what, pause=lambda: page.wait_for_timeout(POLL * 4 * 1000))


async def nothing_more_for(seconds: float) -> None:
    """A named "nothing more appears" window: the caller checks afterwards that nothing changed."""
    await asyncio.sleep(seconds)  # "nothing more appears" window


def nothing_more_for_blocking(seconds: float) -> None:
    time.sleep(seconds)  # "nothing more appears" window


def idle_for(seconds: float) -> None:
    """The timing under test: how long a scenario lets things run (a database down, a process frozen, a gap
    before the next Send), not a wait for anything."""
    time.sleep(seconds)
