"""Browser contexts kept for a test process (beside its browser) and lent to one test at a time, clean each time.

Why: in headless Chromium a page in a new context costs about 2.4 s of CPU on 2 cores (a new storage partition and
a new renderer process, torn down again at the end), a page in a kept context beside a blank keeper tab about
1.1 s; the browser suite opens a few hundred pages, and the whole suite keeps 2 cores busy.

Guarantees:
- ``take(key)`` lends a context made with ``key``'s options (viewport, touch, permissions) that no other page of
  the same test holds: two pages of one test are still two browsers to the app (their own cookies and storage),
  as with a fresh context each.
- ``give_back`` leaves a context as a fresh one would be for what the app and the tests use: every tab it opened
  (its own and those the page opened, such as a Ctrl+click's) is closed, then every storage of every origin its
  pages went to is cleared (local and session storage, IndexedDB, cache storage, service workers: DevTools'
  ``Storage.clearDataForOrigin``) and its cookies deleted; only the blank keeper tab stays, so its renderer and the
  HTTP cache stay warm (each module's app has a port of its own, so no test reads another module's cache).
- A context whose cleaning fails (a crashed tab, a closed browser) is closed and never lent again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from playwright.sync_api import BrowserContext, Page


@dataclass(frozen=True, slots=True)
class ContextKey:
    """The context-wide options a page asks for (everything else is set on the page itself)."""

    width: int
    height: int
    touch: bool
    permissions: tuple[str, ...]

    @classmethod
    def of(cls, width: int, height: int, touch: bool, permissions: Sequence[str]) -> ContextKey:
        return cls(width, height, touch, tuple(sorted(permissions)))


def new_context(browser: Any, key: ContextKey) -> BrowserContext:
    """A fresh browser context with ``key``'s options (a phone: touch events and a mobile viewport, no hover)."""
    context: BrowserContext = browser.new_context(
        viewport={"width": key.width, "height": key.height},
        permissions=list(key.permissions),
        has_touch=key.touch,
        is_mobile=key.touch,
    )
    return context


@dataclass(slots=True)
class Lent:
    """A kept context and its blank keeper tab."""

    context: BrowserContext
    keeper: Page
    key: ContextKey = field(compare=False)
    origins: set[str] = field(default_factory=set, compare=False)  # where its pages went (cleared when given back)

    def watch(self, page: Page) -> Page:
        """Remember every origin ``page`` goes to, so that giving the context back clears their storage."""
        page.on("framenavigated", lambda frame: self._went(frame.url) if frame == page.main_frame else None)
        return page

    def _went(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme in ("http", "https"):
            self.origins.add(f"{parts.scheme}://{parts.netloc}")


class Contexts:
    """The pool of one test process: contexts by their options, each with a keeper tab."""

    def __init__(self, browser: Any) -> None:
        self.browser = browser
        self.free: dict[ContextKey, list[Lent]] = {}

    def take(self, key: ContextKey) -> Lent:
        waiting = self.free.setdefault(key, [])
        if waiting:
            return waiting.pop()
        context = new_context(self.browser, key)
        return Lent(context, context.new_page(), key)

    def give_back(self, lent: Lent) -> None:
        try:
            for page in list(lent.context.pages):
                if page is not lent.keeper:
                    page.close()
            session = lent.context.new_cdp_session(lent.keeper)
            for origin in lent.origins:  # local and session storage, IndexedDB, caches, service workers
                session.send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"})
            session.detach()
            lent.origins.clear()
            lent.context.clear_cookies()
        except Exception:  # noqa: BLE001 - a context that cannot be cleaned is not lent again
            with contextlib.suppress(Exception):  # the browser may be gone already
                lent.context.close()
            return
        self.free.setdefault(lent.key, []).append(lent)

    def close(self) -> None:
        for waiting in self.free.values():
            for lent in waiting:
                lent.context.close()
        self.free.clear()
