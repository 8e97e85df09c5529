"""A message being sent, shown at once: before the ledger has it, saying what the Send waits for.

Guarantees: ``show(text, attachments)`` puts a bubble like the user's own at the end of the chat (``lc-sending``,
marked ``pending-message``; never ``lc-user``: it is no message of the ledger and has no actions) with the text as
plain text, the files' names, and a line saying what the Send waits for, with the seconds it has waited: the model
client loading (litellm is imported on first use, 4-7 s and more on a busy machine: ``engine.offline``), else the
message being saved. The chat's "Ask anything." is hidden meanwhile. ``hide`` removes it, shows the empty state as
it was, and calls ``settled`` (the page renders what the ledger has in the same update: the recorded message takes
the bubble's place, or a refused one is back in the box, without a moment showing neither or both). While nothing
is pending nothing runs.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from nicegui import ui

from engine.offline import imported
from ledger.events import Attachment

LOADING = "Sending · loading the model client (its first use takes a few seconds)"
SAVING = "Sending · saving your message"
FOLLOW_SECONDS = 0.5  # how often a pending Send checks whether the model client has loaded meanwhile


class PendingMessage:
    def __init__(
        self,
        *,
        empty: ui.element,
        settled: Callable[[], None],
        loading: Callable[[], bool] = lambda: imported() is None,
    ) -> None:
        """``empty``: the chat's empty state; ``settled``: renders what the ledger has now; ``loading()``: whether
        the model client is still loading (litellm is imported on first use, never by this)."""
        self.loading, self.empty, self.settled = loading, empty, settled
        self.was_empty = False
        with ui.column().classes("lc-sending self-end items-end gap-0 max-w-[85%]").mark("pending-message") as root:
            self.root = root
            self.files = ui.label("").classes("lc-meta")
            self.bubble = ui.label("").classes("lc-bubble whitespace-pre-wrap break-words")
            with ui.row().classes("gap-1 items-center no-wrap lc-meta").props("role=status"):
                ui.spinner(size="xs")
                self.waits = ui.label("").classes("lc-sending-waits")
                self.since = ui.label("").classes("lc-sending-since")
        self.root.set_visibility(False)
        self.timer = ui.timer(FOLLOW_SECONDS, self._follow, active=False)

    @property
    def shown(self) -> bool:
        return bool(self.root.visible)

    def show(self, text: str, attachments: tuple[Attachment, ...] = ()) -> None:
        self.bubble.set_text(text)
        self.bubble.set_visibility(bool(text))
        names = ", ".join(a.name for a in attachments)
        self.files.set_text(f"with {names}" if names else "")
        self.files.set_visibility(bool(names))
        self.since.props["data-lc-since"] = datetime.now(UTC).isoformat()  # ledger.js counts the seconds
        self.since.set_text("0 s")
        self._follow()
        self.was_empty = bool(self.empty.visible)
        self.empty.set_visibility(False)
        self.root.set_visibility(True)
        self.timer.activate()

    def hide(self) -> None:
        self.timer.deactivate()
        self.root.set_visibility(False)
        self.empty.set_visibility(self.was_empty)  # as before, unless the render below says otherwise
        self.settled()

    def _follow(self) -> None:
        waits = LOADING if self.loading() else SAVING
        if self.waits.text != waits:
            self.waits.set_text(waits)
