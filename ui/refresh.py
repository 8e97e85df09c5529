"""The page's refresh scheduler: engine events in, coalesced re-renders out.

Guarantees: an event only marks what it touches as dirty (the chat, the conversation list, the audit panel) and
asks for a render; nothing runs while nothing happens (no timer ticks on an idle page). The chat is re-rendered at
most every ``FLUSH_SECONDS`` while streaming (a chunk after a quiet spell is shown at once), and at once for events
that start or end something (``FLUSH_NOW``: on the loop's next turn, so that events appended together make one
render); the audit panel, which folds the whole ledger, at most every ``AUDIT_SECONDS`` unless the event was urgent.
After ``close`` (the page went away) nothing more is rendered. ``flushes`` counts renders, so tests can wait on it
instead of sleeping.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from nicegui import context
from nicegui.slot import Slot

from ledger.events import LISTED_KINDS, PROMPT_KINDS, AnyEvent

FLUSH_SECONDS = 0.1  # coalesce streaming updates to at most ~10 per second
AUDIT_SECONDS = 0.5  # the audit panel folds the whole ledger: at most twice a second while streaming
FLUSH_NOW = PROMPT_KINDS  # the kinds whose ``FLAGS`` say ``prompt``
LIST_KINDS = LISTED_KINDS  # the kinds whose ``FLAGS`` say ``listed``


class RefreshScheduler:
    def __init__(
        self,
        *,
        conversation: Callable[[], str | None],
        render_chat: Callable[[], None],
        render_list: Callable[[], None],
        render_audit: Callable[[], None],
        audit_open: Callable[[], bool],
    ) -> None:
        self.conversation = conversation
        self.render_chat, self.render_list, self.render_audit = render_chat, render_list, render_audit
        self.audit_open = audit_open
        self.chat_dirty, self.list_dirty, self.audit_dirty, self.urgent = True, False, False, False
        self.audit_at = 0.0
        self.flushes = 0
        self.flushed_at = 0.0  # ``time.monotonic()`` of the last render
        self.closed = False
        self._pending: asyncio.Handle | None = None  # the render asked for, due at ``_due``
        self._due = 0.0
        self.slot: Slot | None = context.slot_stack[-1] if context.slot_stack else None  # made inside the page

    def on_event(self, event: AnyEvent) -> None:
        if event.KIND in LIST_KINDS:
            self.list_dirty = True
        if event.conversation_id != self.conversation():
            if self.list_dirty:
                self._ask(FLUSH_SECONDS)
            return
        self.chat_dirty = self.audit_dirty = True
        if event.KIND in FLUSH_NOW:
            self.urgent = True
            self._ask(0.0)  # events appended together (submitted, started, ...) make one render, at once
        else:
            self._ask(FLUSH_SECONDS)

    def close(self) -> None:
        """The page went away: forget the render asked for, and ask for none again."""
        self.closed = True
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None

    def _ask(self, spacing: float) -> None:
        """Render on the loop's next turn, or ``spacing`` after the last render if that is later; a render already
        asked for no later than that stands."""
        if self.closed:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (called from a thread of a test): render now
            if self._pending is not None:
                self._pending.cancel()
            self.flush_in_slot()
            return
        now = time.monotonic()
        due = max(now, self.flushed_at + spacing)
        if self._pending is not None:
            if self._due <= due:
                return
            self._pending.cancel()
        self._due = due
        self._pending = loop.call_later(due - now, self.flush_in_slot)

    def flush_in_slot(self) -> None:
        """``flush`` in the page's slot (what a render makes goes where the page put its parts), from anywhere."""
        if self._pending is not None:
            self._pending.cancel()  # (a no-op when it is the render asked for that calls this)
        self._pending = None
        if self.closed:
            return
        if self.slot is None:
            self.flush()
            return
        with self.slot:  # the page's slot: a render may make elements, set the title
            self.flush()

    def flush(self) -> None:
        """Render what is dirty, now (``on_event`` calls it when due; the page, when it shows another chat)."""
        self.flushed_at = time.monotonic()
        if self.list_dirty:
            self.list_dirty = False
            self.render_list()
        if not self.chat_dirty:
            return
        self.chat_dirty = False
        urgent, self.urgent = self.urgent, False
        self.render_chat()
        self.flushes += 1
        now = time.monotonic()
        if self.audit_dirty and self.audit_open() and (urgent or now - self.audit_at >= AUDIT_SECONDS):
            self.audit_dirty, self.audit_at = False, now
            self.render_audit()
