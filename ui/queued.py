"""The message queue on the page: messages queued while an answer runs, shown under it, editable and removable,
with "Send now" whenever no answer runs; and the composer's Queue button.

Guarantees:
- A projection of the ledger (``ConversationState.queue`` and ``queue_paused``): a reload, another tab or another
  instance shows the same queue; it is rebuilt only when the queue, its pause or whether an answer runs changed.
- Each queued message shows its text (as plain text) and its files, and the buttons "Edit queued",
  "Remove from queue" and, while no answer runs, "Send now" (a paused queue, after Stop, a failure or a
  restart: the status line says which). Every action goes through the engine (``engine.commands.queue``); a refusal (the
  message was sent or removed meanwhile, in another tab) is a notice and loses nothing typed.
- An edit open while the queue changes elsewhere keeps its draft; it closes only when its message was sent or
  removed meanwhile (the answer before it completed, another tab): then a changed draft is put in an empty message
  box (a notice says so), so nothing typed is lost.
- The composer's Queue button shows only while the chat's answer runs; it queues the box's text and files as
  Enter does then (``ChatPage.submit`` queues while an answer runs).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from nicegui import ui

from engine.commands import Engine, InputRejected
from ledger.errors import StoreError
from ledger.events import QueuedItem
from ledger.state import ConversationState
from ui.composer import Composer
from ui.notices import notice

STATUS = {
    "running": "Queued: sent as the next message when this answer completes.",
    "running_many": "{n} queued: sent in order, each when the answer before it completes.",
    "stopped": "Queue paused: the answer was stopped. Send now, edit or remove.",
    "failed": "Queue paused: the answer failed. Send now, edit or remove.",
    "restart": "Queue paused: the app stopped while the answer ran. Nothing is sent without you: Send now.",
    "waiting": "Queued, not sent yet: Send now, edit or remove.",
    "paused_running": "Queue paused (an earlier answer was stopped): Send now once this answer ends.",
}
EDIT_LOST = "That queued message was sent or removed before your edit was saved."


def status_line(conv: ConversationState) -> str:
    """What the queue is waiting for, in words."""
    running = conv.live_attempt() is not None
    if conv.queue_paused is not None:
        return STATUS["paused_running"] if running else STATUS[conv.queue_paused]
    if not running:
        return STATUS["waiting"]
    many = len(conv.queue) > 1
    return STATUS["running_many"].format(n=len(conv.queue)) if many else STATUS["running"]


class QueuedPanel:
    def __init__(self, engine: Engine, cid: Callable[[], str | None]) -> None:
        self.engine, self.cid = engine, cid
        self.shown: object = None
        self.shown_cid: str | None = None
        self.editing: str | None = None  # the queue id whose editor is open, and its draft
        self.draft = self.original = ""
        self.composer: Composer | None = None
        self.queue_button: ui.button | None = None
        with ui.column().classes("w-full gap-2 items-end").mark("queued") as self.root:
            self.root.props('role=region aria-label="Queued to send"')
            self.status = ui.label("").classes("lc-meta").props("role=status aria-live=polite").mark("queue-status")
            self.items = ui.column().classes("w-full gap-2 items-end")
        self.root.set_visibility(False)

    def add_queue_button(self, composer: Composer) -> None:
        """A Queue button (an icon, narrow enough for a phone) before Send/Stop, shown while an answer runs."""
        self.composer, slot = composer, composer.button.parent_slot
        assert slot is not None, "the composer's button is in its row"
        with slot:
            self.queue_button = (
                ui.button(icon="schedule_send", on_click=composer.send)
                .props('flat round aria-label="Queue" title="Queue: sent after this answer (Enter does too)"')
                .mark("queue")
            )
        self.queue_button.move(target_index=slot.children.index(composer.button))
        self.queue_button.set_visibility(False)

    def render(self, conv: ConversationState | None) -> None:
        running = conv is not None and conv.live_attempt() is not None
        if self.queue_button is not None:
            self.queue_button.set_visibility(running)
        queue = conv.queue if conv is not None else ()
        key = (conv.conversation_id if conv else None, queue, conv.queue_paused if conv else None, running)
        if key == self.shown:
            return
        self.shown = key
        if self.editing is not None and key[0] != self.shown_cid:
            self.editing = None  # another chat is shown: its draft stays with nobody (the editor was closed by it)
        elif self.editing is not None and all(i.queue_id != self.editing for i in queue):
            self._edit_lost()
        self.shown_cid = key[0]
        self.root.set_visibility(bool(queue))
        self.items.clear()
        if conv is None or not queue:
            return
        self.status.set_text(status_line(conv))
        with self.items:
            for item in queue:
                self._item(item, sendable=not running)

    def _item(self, item: QueuedItem, *, sendable: bool) -> None:
        with ui.column().classes("lc-queued self-end items-end gap-1 max-w-[85%]").mark("queued-item") as box:
            box.props["data-queue-id"] = item.queue_id
            if item.attachments:
                ui.label("Files: " + ", ".join(a.name for a in item.attachments)).classes("lc-meta")
            if self.editing == item.queue_id:
                self._editor(item)
                return
            ui.label(item.text).classes("lc-bubble whitespace-pre-wrap break-words").mark("queued-text")
            with ui.row().classes("gap-1 items-center no-wrap"):
                ui.label("queued").classes("lc-meta")
                ui.button(icon="edit", on_click=lambda: self._open(item)).props(
                    'flat dense round size=sm aria-label="Edit queued" title="Edit before it is sent"'
                ).mark("queued-edit")
                ui.button(icon="delete", on_click=lambda: self._remove(item)).props(
                    'flat dense round size=sm aria-label="Remove from queue" title="Remove: it is never sent"'
                ).mark("queued-remove")
                if sendable:
                    ui.button("Send now", icon="send", on_click=lambda: self._send_now(item)).props(
                        "dense no-caps unelevated"
                    ).mark("queued-send-now")

    def _editor(self, item: QueuedItem) -> None:
        box = (
            ui.textarea(value=self.draft, on_change=lambda e: setattr(self, "draft", e.value or ""))
            .props('autogrow outlined dense autofocus aria-label="Queued text"')
            .classes("w-full lc-edit-box")
            .mark("queued-edit-box")
        )

        async def save() -> None:
            cid = self.cid()
            if cid is None or not await self._do(self.engine.queued.edit(cid, item.queue_id, box.value or "")):
                return
            self._close()

        box.on("keydown.enter.exact.prevent", save)
        box.on("keydown.esc", self._close)
        with ui.row().classes("gap-1 items-center"):
            ui.button("Cancel", on_click=self._close).props("flat dense no-caps").mark("queued-edit-cancel")
            ui.button("Save", icon="check", on_click=save).props("dense no-caps unelevated").mark("queued-edit-save")

    def _edit_lost(self) -> None:
        """The message being edited was sent or removed elsewhere: a changed draft goes to an empty message box."""
        box = self.composer.input if self.composer is not None else None
        if self.draft != self.original:
            if box is not None and not (box.value or "").strip():
                box.value = self.draft
                notice(EDIT_LOST + " It is in the message box.", "warning", multi_line=True)
            else:
                notice(EDIT_LOST, "warning", multi_line=True)
        self.editing = None

    def _open(self, item: QueuedItem) -> None:
        self.editing, self.draft, self.original, self.shown = item.queue_id, item.text, item.text, None
        self.render(self.engine.conversation(self.cid() or ""))

    def _close(self) -> None:
        self.editing, self.shown = None, None
        self.render(self.engine.conversation(self.cid() or ""))

    async def _remove(self, item: QueuedItem) -> None:
        cid = self.cid()
        if cid is not None:
            await self._do(self.engine.queued.remove(cid, item.queue_id))

    async def _send_now(self, item: QueuedItem) -> None:
        cid = self.cid()
        if cid is not None:
            await self._do(self.engine.queued.send_now(cid, item.queue_id))

    async def _do(self, action: Awaitable[object]) -> bool:
        try:
            await action
        except (InputRejected, StoreError) as exc:
            notice(str(exc), "warning", multi_line=True)
            return False
        return True
