"""The message box and its Send/Stop button.

Guarantees: Enter sends (never stops), Shift+Enter adds a line, Esc stops; the button reads Send, or Stop while
the shown answer streams; after a send it is disabled for ``STOP_GUARD_SECONDS`` so that a double click on Send
can never stop what it just sent; an empty Send says why (the button reads as disabled while the box is empty,
``static/surface.js``); Enter and the button carry the box's text, so a Send made before the page's socket is
live is carried out once it is, with the text typed; a message over the limit, or one the engine rejects,
stays in the box with a clear notice; a second send while one is being submitted is ignored.
A Send is never lost: the text stays in the box (box and button disabled) until ``submit`` says it was recorded,
and is cleared only then; a refusal, or an error ``submit`` did not foresee, leaves it there with a notice.
Files (``ui.attachments``): the draft's chips are sent with the text and cleared only when the send was recorded
(a refusal keeps text and chips). Send while an upload runs waits for it with a visible state ("Waiting for the
upload…", the button then cancels the wait and the uploads, so does Esc) and sends once every upload arrived; a
failed or cancelled upload sends nothing and keeps the draft.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

from nicegui import ui
from nicegui.events import GenericEventArguments

from ledger.values import Attachment
from ui.attachments import AttachmentTray, FilesService
from ui.notices import notice

log = logging.getLogger("ledger_chat.ui")
NOT_SENT = "Your message could not be sent ({}). It is still in the box: send it again."
WAITING = "Waiting for the upload…"
UPLOAD_STOPPED = "Not sent: an upload did not finish. Your message and its files are still here; send it again."
EMPTY = "Nothing to send: type a message (or attach a file) first."
TYPED = "(e) => emit(document.getElementById('lc-message-box')?.value ?? null)"  # what the box holds, sent along
STOP_GUARD_SECONDS = 0.3  # Stop stays disabled this long after Send: a double click never stops
ECHO_SECONDS = 30.0  # how late the box's own text may still arrive after its Send (5 s was too short under load)


class Composer:
    def __init__(
        self,
        *,
        submit: Callable[[str, tuple[Attachment, ...]], Awaitable[str | None]],
        stop: Callable[[], Awaitable[None]],
        streaming: Callable[[], bool],
        max_chars: int,
        files: FilesService | None = None,
    ) -> None:
        """``submit(text, attachments)`` returns None when sent, else the reason it was refused."""
        self.submit, self.stop, self.streaming, self.max_chars = submit, stop, streaming, max_chars
        self.sending = False
        self.waiting = False  # Send was pressed while an upload ran: it sends once the uploads arrived
        self.stop_guard_until = 0.0
        self.sent: tuple[str, float] | None = None  # the text last sent, and when: its late echo is not a draft
        self.tray: AttachmentTray | None = None
        with ui.column().classes("w-full max-w-3xl mx-auto gap-0 lc-tray-scope"):
            if files is not None:
                self.tray = AttachmentTray(files, on_settled=self._uploads_settled, main=True)
            self._build_row(files is not None)

    def _build_row(self, with_files: bool) -> None:
        with ui.row().classes("w-full items-end gap-2 no-wrap"):
            if with_files:
                AttachmentTray.attach_button()
            self.input = (
                ui.textarea(label="Message")
                .props("autogrow outlined dense autofocus maxlength=200000 for=lc-message-box")
                .classes("flex-grow lc-composer")
                .mark("message-input")
            )
            # the key carries the text: before the page's socket is live, the box's text and the key are queued
            # separately, and the key must never find a box the server still sees empty
            self.input.on("keydown.enter.exact.prevent", self._typed_send, js_handler=TYPED)
            self.input.on("keydown.esc", self.escape)
            self.input.on("update:model-value", self._late_echo, [None])  # the browser's updates only
            self.button = ui.button("Send", icon="send").props("no-caps data-lc-send").mark("send")
            self.button.on("click", self._typed_send_or_stop, js_handler=TYPED)
            self.button.tooltip("Enter sends · Shift+Enter adds a line · Esc stops")

    @property
    def attachments(self) -> tuple[Attachment, ...]:
        return self.tray.attachments if self.tray is not None else ()

    def show_streaming(self, streaming: bool) -> None:
        if self.waiting:
            return
        label = "Stop" if streaming else "Send"
        if self.button.text != label:
            self.button.set_text(label)
            self.button.props(f"icon={'stop' if streaming else 'send'} color={'negative' if streaming else 'primary'}")

    def disable(self) -> None:
        self.input.disable()
        self.button.disable()

    def enable(self) -> None:
        self.input.enable()
        self.button.enable()

    async def escape(self) -> None:
        """Esc: cancel the uploads (and a Send waiting for them) when any runs, else stop the answer."""
        if self.tray is not None and self.tray.uploading:
            self._cancel_wait()
            self.tray.cancel_uploads()
        else:
            await self.stop()

    async def send_or_stop(self) -> None:
        if self.waiting:
            await self.escape()  # the button reads "Waiting for the upload…": pressing it cancels
        elif self.streaming():
            if time.monotonic() < self.stop_guard_until:
                return  # a click sent before the browser saw the button disabled: the tail of a double click
            await self.stop()
        else:
            await self.send()

    def _wait_for_uploads(self) -> None:
        self.waiting = True
        self.input.disable()
        self.button.props["aria-label"] = "Waiting for the upload; press to cancel it"
        self.button.set_text(WAITING)
        self.button.props("icon=hourglass_top color=primary")

    def _cancel_wait(self) -> None:
        if self.waiting:
            self.waiting = False
            self.input.enable()
            self.button.props.pop("aria-label", None)
            self.show_streaming(self.streaming())

    async def _uploads_settled(self, ok: bool) -> None:
        if not self.waiting:
            return
        self._cancel_wait()
        if ok:
            await self.send()
        else:
            notice(UPLOAD_STOPPED, "warning", multi_line=True)

    def _take_typed(self, e: GenericEventArguments) -> None:
        if isinstance(e.args, str) and not (self.sending or self.waiting) and e.args != self.input.value:
            self.input.value = e.args

    def _late_echo(self, e: GenericEventArguments) -> None:
        """Before the socket is live the box's keystrokes and the Send are queued apart and may arrive in either
        order: the box's text arriving just after its own Send was recorded is that Send's echo, not a new draft.
        The browser may send that text more than once (each echo is cleared); any other text is a new draft, and
        from then on nothing is taken for an echo."""
        value = e.args[0] if isinstance(e.args, list) and e.args else e.args
        if self.sent is None or not value:
            return
        text, at = self.sent
        if value == text and time.monotonic() - at < ECHO_SECONDS:
            self.input.value = ""
        else:
            self.sent = None

    async def _typed_send(self, e: GenericEventArguments) -> None:
        self._take_typed(e)
        await self.send()

    async def _typed_send_or_stop(self, e: GenericEventArguments) -> None:
        self._take_typed(e)
        await self.send_or_stop()

    async def send(self) -> None:
        text = self.input.value or ""
        if self.sending or self.waiting:
            return
        if self.tray is not None and self.tray.uploading:
            self._wait_for_uploads()
            return
        attachments = self.attachments
        if not text.strip() and not attachments:
            notice(EMPTY, "info")
            return
        if len(text) > self.max_chars:
            notice(
                f"This message has {len(text):,} characters; the limit is {self.max_chars:,}. Shorten it and send "
                "again (your text is still in the box).",
                "warning",
                multi_line=True,
            )
            return
        self.sending, queued = True, self.streaming()  # while an answer runs, a Send queues (the button reads Stop)
        self.input.disable()  # the text stays here, unchangeable, until the submit is recorded
        self.button.disable()  # until STOP_GUARD_SECONDS after the submit: a double click never reaches Stop
        try:
            try:
                refused = await self.submit(text, attachments)
            except Exception as exc:  # noqa: BLE001 - whatever went wrong, the text must not be lost
                log.exception("a Send failed")
                refused = NOT_SENT.format(exc or type(exc).__name__)
            self.input.enable()
            if refused is None:
                self.input.value = ""
                self.sent = (text, time.monotonic())
                if self.tray is not None:
                    self.tray.clear()
                if queued:  # the answer was running already: a Stop right after is meant, never a double click
                    self.button.enable()
                else:
                    self.stop_guard_until = time.monotonic() + STOP_GUARD_SECONDS
                    ui.timer(STOP_GUARD_SECONDS, self.button.enable, once=True)
            else:
                self.button.enable()
                notice(refused, "warning", multi_line=True)
        finally:
            self.sending = False
