"""One poll for the whole process of what changes outside any conversation (the data folder's health, the tool
servers), shown on every open page.

Guarantees: a ``Watch`` reads its value once per ``seconds`` for all pages together (and once more when a page
starts following), and not at all while no page follows it; a page's ``show`` runs inside that page's slot when it
starts following, then only when the value changed (``==``), so an idle page costs nothing per tick however many are
open. A page stops following when its client is deleted; a ``show`` that raises is reported and the others still
run.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from typing import Generic, TypeVar

from nicegui import app, context
from nicegui.slot import Slot
from nicegui.timer import Timer

log = logging.getLogger("ledger_chat.watch")
T = TypeVar("T")


class Watch(Generic[T]):
    def __init__(self, read: Callable[[], T], seconds: float) -> None:
        self.read, self.seconds = read, seconds
        self._views: dict[int, tuple[Slot, Callable[[T], None]]] = {}
        self._keys = itertools.count()
        self._value: tuple[T] | None = None  # the last value read, boxed (None: not read yet)
        self._timer: Timer | None = None

    def follow(self, show: Callable[[T], None]) -> None:
        """From inside a page: ``show`` the value now, and again whenever it changes, until the page goes away."""
        if self._timer is None:
            self._timer = app.timer(self.seconds, self._tick, immediate=False)
        self._refresh()  # the pages already open see a change this read finds, as at a tick
        key = next(self._keys)
        self._views[key] = (context.slot_stack[-1], show)
        context.client.on_delete(lambda: self._views.pop(key, None))
        assert self._value is not None
        show(self._value[0])

    def _tick(self) -> None:
        if self._views:
            self._refresh()

    def _refresh(self) -> None:
        value = self.read()
        if self._value is not None and self._value[0] == value:
            return
        self._value = (value,)
        for slot, show in list(self._views.values()):
            try:
                with slot:
                    show(value)
            except Exception:  # noqa: BLE001 - one broken page must not keep the others from the news
                log.exception("a page could not show what changed")
