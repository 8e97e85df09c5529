"""The tests that drive a real browser: Debian's Chromium, launched once per test process, and how such a test is
marked.

Guarantees: ``mark_as_browser_tests`` gives every item it is handed the ``browser`` marker (so ``-m browser`` and
``-m "not browser"`` select them) and, when Debian's ``chromium`` is not installed, a skip that says so and how
to get it (allowed only when the run knowingly allows it: ``tests/support/skips.py``; else the test fails);
``launched`` starts a headless Chromium with the arguments every test and bench uses and closes it. Importing it
sets how long every ``expect`` waits (``EXPECT_TIMEOUT_MS``).
``kept`` is ``launched`` for a browser kept across modules: between its calls, sync Playwright leaves its event
loop marked as the thread's running loop (``playwright/_impl/_greenlets.py``, ``wait_for_future``), which would
refuse every later ``asyncio`` loop (the async tests); ``turn()`` marks it for as long as a phase of a test that
uses the browser runs, and takes the mark away after it (``tests/conftest.py`` wraps each test phase in it), so a
test without the browser runs as if Playwright were not there.
Playwright drives Chromium itself, so ``chromedriver`` is not needed for these tests.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import pytest
from playwright.sync_api import Browser, expect, sync_playwright

from tests.support.app_process import CHROMIUM_ARGS

#: Debian's headless shell (the old headless mode, what Playwright itself runs headless: no browser window code),
#: else its full Chromium; ``LC_CHROMIUM`` names another binary
EXECUTABLE = os.environ.get("LC_CHROMIUM") or shutil.which("chromium-headless-shell") or shutil.which("chromium")
MISSING = None if EXECUTABLE else "Debian chromium is not installed (tasks.py installs it)"
EXPECT_TIMEOUT_MS = 15_000  # every ``expect`` waits this long for its condition (Playwright's default is 5 s): a
# wait, never a bound, so a passing test takes no longer; the test workers share 2 cores
expect.set_options(timeout=EXPECT_TIMEOUT_MS)


def mark_as_browser_tests(items: Iterable[pytest.Item]) -> None:
    for item in items:
        item.add_marker(pytest.mark.browser)
        if MISSING:
            item.add_marker(pytest.mark.skip(reason=MISSING))


@contextmanager
def launched() -> Iterator[Browser]:
    """A headless Chromium; each test opens its own contexts in it."""
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=EXECUTABLE, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


_kept_loop: list[asyncio.AbstractEventLoop] = []  # the kept browser's Playwright loop, while it runs


@contextmanager
def kept() -> Iterator[Browser]:
    """A headless Chromium for a whole test process; ``turn`` takes its loop's mark away between tests."""
    with launched() as chromium:
        loop = asyncio._get_running_loop()
        assert loop is not None, "sync Playwright marks its loop as running between its calls"
        _kept_loop.append(loop)
        try:
            yield chromium
        finally:
            asyncio._set_running_loop(loop)  # the end may come in a phase of a test without the browser
    _kept_loop.clear()
    asyncio._set_running_loop(None)


@contextmanager
def turn() -> Iterator[None]:
    """The kept browser's loop marked as running for the block, and unmarked after it (also when the block is
    where the browser was launched: it leaves the mark set)."""
    if _kept_loop and not _kept_loop[0].is_closed():
        asyncio._set_running_loop(_kept_loop[0])
    try:
        yield
    finally:
        if _kept_loop:
            asyncio._set_running_loop(None)
