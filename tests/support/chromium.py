"""The tests that drive a real browser: Debian's Chromium, launched once per module, and how such a test is marked.

Guarantees: ``mark_as_browser_tests`` gives every item it is handed the ``browser`` marker (so ``-m browser`` and
``-m "not browser"`` select them) and, when Debian's ``chromium`` is not installed, a skip that says so and how
to get it (allowed only when the run knowingly allows it: ``tests/support/skips.py``; else the test fails);
``launched`` starts a headless Chromium with the arguments every test and bench uses and closes it. Importing it
sets how long every ``expect`` waits (``EXPECT_TIMEOUT_MS``).
Playwright drives Chromium itself, so ``chromedriver`` is not needed for these tests.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import pytest
from playwright.sync_api import Browser, expect, sync_playwright

from tests.support.app_process import CHROMIUM_ARGS

MISSING = None if shutil.which("chromium") else "Debian chromium is not installed (tasks.py installs it)"
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
        chromium = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
