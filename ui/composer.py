"""The message box and its Send/Stop button.

Guarantees: Enter sends (never stops), Shift+Enter adds a line, Esc stops; the button reads Send, or Stop while
the shown answer streams. A press meant for Send never stops the answer it started: while a Send is being recorded
the button is busy (a second press does nothing); Stop is disabled for ``STOP_GUARD_SECONDS`` after the Send was
recorded, and in the browser a press on Stop is ignored until it has shown that long (``static/composer.js``).
The message shows at once in a pending bubble (``ui.pending``) that says what the Send waits for, until the ledger
has it. An empty Send says why (the button reads as disabled while the box is empty, ``static/composer.js``).
Enter and the button carry the box's text and the number of sends recorded when they were pressed: a press made
on a view older than the last recorded send is ignored (never a second send of the same message), and a Send made
before the page's socket is live is held in the browser until the box's own queued updates have gone out, then
carried out once, with the text typed: the box is empty afterwards and stays empty.
A message over the limit says so under the box as it is typed or pasted (a long paste's "Attach as a file?" says
whether it would fit, ``static/attachments.js``); over the limit, or rejected by the engine, it stays in the box
with a clear notice at Send; a second send while one
is being submitted is ignored.
A draft survives a reload (kept in the browser per chat, ``static/composer.js``); pressing Send forgets it, a
refused send keeps it again.
A Send is never lost: the text stays in the box (box and button disabled) until ``submit`` says it was recorded,
and is cleared only then; a refusal, or an error ``submit`` did not foresee, leaves it there with a notice.
Files (``ui.attachments``): the draft's chips are sent with the text and cleared only when the send was recorded
(a refusal keeps text and chips). Send while an upload runs waits for it with a visible state ("Waiting for the
upload…", the button then cancels the wait and the uploads, so does Esc) and sends once every upload arrived; a
failed or cancelled upload sends nothing and keeps the draft. "/" and "@" in the box list the tool servers' prompts
and resources (``ui.context_menus``).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable

from nicegui import ui
from nicegui.events import GenericEventArguments

from ledger.events import Attachment
from ui.attachments import AttachmentTray, FilesService
from ui.context_menus import ContextMenus
from ui.notices import notice
from ui.pending import PendingMessage

log = logging.getLogger("ledger_chat.ui")
NOT_SENT = "Your message could not be sent ({}). It is still in the box: send it again."
WAITING = "Waiting for the upload…"
UPLOAD_STOPPED = "Not sent: an upload did not finish. Your message and its files are still here; send it again."
EMPTY = "Nothing to send: type a message (or attach a file) first."
# a press sends the box's text and the sends it had seen recorded (static/composer.js; without it: the text alone)
PRESS = (
    "(e) => window.lcComposer ? window.lcComposer.press(emit, e)"
    " : emit({text: document.getElementById('lc-message-box')?.value ?? null})"
)
#: Stop is not armed this long after it shows: the second press of a double click, or a finger still on Send, never
#: stops the answer. Short, because Stop right after sending (release scenario 1) is a promise too; the message now
#: shows at once (``ui.pending``), so the reason for the issue's second press 0.8 s later is gone.
STOP_GUARD_SECONDS = 0.6


class Composer:
    def __init__(
        self,
        *,
        submit: Callable[[str, tuple[Attachment, ...]], Awaitable[str | None]],
        stop: Callable[[], Awaitable[None]],
        streaming: Callable[[], bool],
        max_chars: int,
        files: FilesService | None = None,
        pending: PendingMessage | None = None,
        model: Callable[[], str] | None = None,
    ) -> None:
        """``submit(text, attachments)`` returns None when sent, else the reason it was refused; ``pending`` shows
        the message meanwhile."""
        self.submit, self.stop, self.streaming, self.max_chars = submit, stop, streaming, max_chars
        self.pending = pending
        self.sending = False
        self.waiting = False  # Send was pressed while an upload ran: it sends once the uploads arrived
        self.stop_guard_until = 0.0
        self.sends = 0  # sends recorded from this box: a press made before the last of them is not a new send
        self.tray: AttachmentTray | None = None
        with ui.column().classes("w-full max-w-3xl mx-auto gap-0 lc-tray-scope"):
            if files is not None:
                self.tray = AttachmentTray(files, on_settled=self._uploads_settled, main=True, model=model)
                self.tray.root.props["data-max-chars"] = str(max_chars)  # a long paste says whether it would fit
            self._build_row(files is not None)
            if self.tray is not None:  # "/" prompts and "@" resources of the tool servers (ui.context_menus)
                ContextMenus(self.tray)
            self.too_long = ui.label("").classes("lc-meta lc-too-long").mark("too-long")
            self.too_long.set_visibility(False)
        self.input.on_value_change(self._check_length)

    def _check_length(self) -> None:
        """Over the limit, the box says so as it happens (not only when Send is pressed)."""
        n = len(self.input.value or "")
        if n > self.max_chars:
            self.too_long.set_text(
                f"{n:,} characters: a message holds at most {self.max_chars:,}. Shorten it, or attach it as a file."
            )
        if self.too_long.visible != (n > self.max_chars):
            self.too_long.set_visibility(n > self.max_chars)

    def model_changed(self) -> None:
        """The page picked another model: the file chips say what it will receive."""
        if self.tray is not None:
            self.tray.model_changed()

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
            self.input.on("keydown.enter.exact.prevent", self._typed_send, js_handler=PRESS)
            self.input.on("keydown.esc", self.escape)
            self.button = ui.button("Send", icon="send").props("no-caps data-lc-send").mark("send")
            self.button.props(f"data-lc-sends=0 data-lc-guard-ms={int(STOP_GUARD_SECONDS * 1000)}")
            self.button.on("click", self._typed_send_or_stop, js_handler=PRESS)
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

    def _take_typed(self, e: GenericEventArguments) -> bool:
        """The press's text into the box; False for a press made on a view older than the last recorded send (the
        browser had not shown that send's result yet: the press was meant for what is sent already)."""
        said = e.args if isinstance(e.args, dict) else {}
        seen, text = said.get("sends"), said.get("text")
        if isinstance(seen, int) and seen >= 0 and seen != self.sends:
            return False
        if isinstance(text, str) and not (self.sending or self.waiting) and text != self.input.value:
            self.input.value = text
        return True

    async def _typed_send(self, e: GenericEventArguments) -> None:
        if self._take_typed(e):
            await self.send()

    async def _typed_send_or_stop(self, e: GenericEventArguments) -> None:
        if self._take_typed(e):
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
        self.button.props("loading")
        if self.pending is not None and not queued:  # a queued message shows in the queue at once
            self.pending.show(text, attachments)
        try:
            try:
                refused = await self.submit(text, attachments)
            except Exception as exc:  # noqa: BLE001 - whatever went wrong, the text must not be lost
                log.exception("a Send failed")
                refused = NOT_SENT.format(exc or type(exc).__name__)
            self.input.enable()
            self.button.props(remove="loading")
            if refused is None:
                self.input.value = ""
                self.sends += 1
                self.button.props(f"data-lc-sends={self.sends}")
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
                self.input.client.run_javascript("window.lcDraft && lcDraft.kept()")  # still a draft after a reload
        finally:
            self.sending = False
            if self.pending is not None:
                self.pending.hide()


def forget_draft(cid: str) -> None:
    """This browser forgets the message box's draft of chat ``cid`` (it was deleted: its words go with it)."""
    ui.run_javascript(f"window.lcDraft && lcDraft.forget({json.dumps(f'/chat/{cid}')})")
