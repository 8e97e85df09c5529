"""The screen reader's word when an answer ends: one polite announcement per end, never one per token.

Guarantees: ``EndAnnouncer`` owns a visually hidden ``role=status`` label (marked ``announcer``); ``update`` with the
chat's state sets its text once, when the answer it saw live has ended (``ui.format.announcement``); ``forget``
drops what it saw (another chat is shown).
"""

from __future__ import annotations

from nicegui import ui

from ledger.state import ConversationState
from ui.format import announcement

__all__ = ["EndAnnouncer"]


class EndAnnouncer:
    def __init__(self) -> None:
        self.label = ui.label("").classes("lc-sr-only").props("role=status aria-live=polite").mark("announcer")
        self._live: str | None = None  # the attempt seen streaming, until its end is announced

    def forget(self) -> None:
        self._live = None

    def update(self, conv: ConversationState) -> None:
        live = conv.live_attempt()
        if live is not None:
            self._live = live.attempt_id
            return
        if self._live is None:
            return
        ended = conv.attempts.get(self._live)
        self._live = None
        if ended is not None:
            self.label.set_text(announcement(ended))
