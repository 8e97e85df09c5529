"""A user message: its text, when it was sent and its tokens, and what a person can do with it.

Guarantees: the text is shown as plain text (never markup); Copy, Edit and Branch are buttons with those names;
Edit opens the text in place (also while a later answer streams: Save stops it first) and Save sends it as a new
version with a new answer (what followed the old version stays in its branch), Cancel or Esc leaves everything as
it was, and a refused edit keeps the box open with the
text; versions are browsable with ‹ n/m › (``data-version``); the turn stats are those of the answer shown below
it (the attempt the reader sees), not of a later retry.
Files (``MessageState.attachments``, so a reload shows them again): a raster image as its thumbnail from the app's own
``/files/{sha}/thumb``, a link opening the full size in a new tab; every other file (SVG and HTML included: never
rendered inline) as a chip that downloads (``/files/{sha}``, served as an attachment under its recorded name). Each
carries ``data-attachment``. The editor shows the message's files as chips: Remove takes one away, "Attach files" adds
more; Save sends exactly those (the original's, unchanged, when none was touched). A file fetched from a resource
has "Refresh <name>" beside it (``ui.resource_refresh``: fetched again for the next message).
A text over ``ledger.bounds.TEXT_BOUND`` shows its preview, how much of it that is, and a link to the whole
(``ui.whole_text``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nicegui import ui

from engine.commands import Engine, InputRejected
from engine.files import RASTER
from ledger.events import Attachment, TurnMetrics
from ledger.state import ConversationState, MessageState
from ledger.tree import versions
from ui.attachments import AttachmentTray, FilesService, describe
from ui.format import clock, user_line
from ui.notices import notice
from ui.resource_refresh import Draft, refresh_button
from ui.whole_text import show_whole
from ui.widgets import Actions, Switcher, TimeLabel

WAIT_FOR_UPLOAD = "An upload is still running: wait for it to finish (or cancel it), then Save."


@dataclass(frozen=True)
class EditFiles:
    """An edit that may change the files: through the engine for the page's chat and model; a refusal is a notice."""

    files: FilesService | None
    engine: Engine
    cid: Callable[[], str | None]
    model: Callable[[], str]
    preset: Callable[[], str | None] = lambda: None  # the agent preset the page has picked
    trays: list[AttachmentTray] = field(default_factory=list, compare=False)  # the open edits' file chips
    draft: Draft = lambda: None  # the message box's tray: a sent resource's Refresh adds to it (ui.resource_refresh)

    @classmethod
    def of(cls, page: Any) -> EditFiles:
        """The chat page's: its files, chat, model and preset, and its message box's tray (read when used)."""
        return cls(page.files, page.engine, lambda: page.cid, lambda: page.model, lambda: page.preset,
                   draft=lambda: page.composer.tray)  # fmt: skip

    def opened(self, tray: AttachmentTray) -> None:
        """An edit opened with ``tray``: its chips follow the page's model from now on (``model_changed``)."""
        self.trays[:] = [t for t in self.trays if not t.root.is_deleted]
        self.trays.append(tray)

    def model_changed(self) -> None:
        """The page picked another model: every open edit's chips say again what that model gets."""
        self.trays[:] = [t for t in self.trays if not t.root.is_deleted]
        for tray in self.trays:
            tray.model_changed()

    async def edit(self, message_id: str, text: str, attachments: tuple[Attachment, ...] | None) -> bool:
        cid = self.cid()
        if cid is None:
            return False
        try:
            await self.engine.edit(cid, message_id, text, self.model(), attachments=attachments, preset=self.preset())
        except InputRejected as exc:
            notice(str(exc), "warning", multi_line=True)
            return False
        return True


def show_files(attachments: tuple[Attachment, ...], files: EditFiles | None = None) -> None:
    """A sent message's files: thumbnails that open full size, other files as chips that download; a resource's
    with a Refresh button (``ui.resource_refresh``) where the page has a message box."""
    for a in attachments:
        if a.media_type in RASTER:
            with ui.element("a").classes("lc-file-image") as link:
                ui.element("img").props.update(src=f"/files/{a.sha256}/thumb", alt=a.name, loading="lazy")
            link.props.update(href=f"/files/{a.sha256}", target="_blank", rel="noopener noreferrer")
            link.props.update({"title": f"{a.name} · {describe(a)}", "aria-label": f"Open {a.name} full size"})
        else:
            with ui.element("a").classes("lc-chip lc-file-chip") as link:
                ui.icon("description", size="sm")
                with ui.element("span").classes("lc-chip-text"):
                    ui.label(a.name).classes("lc-chip-name")
                    ui.label(describe(a)).classes("lc-meta lc-chip-kind")
            link.props.update(href=f"/files/{a.sha256}", download=a.name)  # the name: the ledger's (ui.download_names)
            link.props.update({"aria-label": f"Download {a.name}", "title": f"Download {a.name}"})
        link.props["data-attachment"] = a.sha256
        if files is not None and files.files is not None:
            refresh_button(a, files.engine, files.files, files.draft)


class UserMessageView:
    def __init__(self, message: MessageState, actions: Actions, files: EditFiles | None = None) -> None:
        self.message_id = message.message_id
        self.actions, self.files = actions, files
        self.text = message.text
        self.attachments = message.attachments
        self._versions: tuple[str, ...] = (message.message_id,)
        self._shown: tuple[object, ...] | None = None
        with ui.column().classes("lc-user self-end items-end gap-0 max-w-[85%]").mark("user-message") as self.root:
            self.root.props["data-lc-message"] = message.message_id  # a search opens the chat at it
            self.shown_files = ui.element("div").classes("lc-files")
            with self.shown_files:
                show_files(message.attachments, files)
            self.shown_files.set_visibility(bool(message.attachments))
            self.bubble = ui.label(message.text).classes("lc-bubble whitespace-pre-wrap break-words")
            self.bubble.set_visibility(bool(message.text) or not message.attachments)
            if message.whole is not None:
                show_whole(message.text, message.whole)
            self.editor: ui.column | None = None  # built when Edit is pressed
            with ui.row().classes("gap-1 items-center no-wrap"):
                self.switcher = Switcher("version", "version", self._step)
                self.sent = TimeLabel(prefix="sent ").mark("sent")
                self.footer = ui.label("").classes("lc-meta")
                self.tools = ui.row().classes("gap-0 lc-message-actions")
        with self.tools:
            # native tooltips (``title``): a Quasar tooltip is one more element per button, per message
            ui.button(icon="content_copy", on_click=self._copy).props(
                'flat dense round size=sm aria-label="Copy" title="Copy your message"'
            )
            ui.button(icon="edit", on_click=self._open_editor).props(
                'flat dense round size=sm aria-label="Edit" title="Edit and send as a new version"'
            ).mark("edit")
            ui.button(icon="call_split", on_click=lambda: self.actions.branch(self.message_id)).props(
                'flat dense round size=sm aria-label="Branch" '
                'title="Branch to a new chat before this message, with it ready to edit"'
            ).mark("branch")

    def update(self, conv: ConversationState, metrics: TurnMetrics | None, live: bool) -> None:
        message = conv.messages[self.message_id]
        self._versions = versions(conv, message)
        number = self._versions.index(self.message_id) + 1 if self.message_id in self._versions else 1
        key = (number, len(self._versions), metrics, live, message.ts)
        if key == self._shown:
            return
        self._shown = key
        self.root.props["data-version"] = f"{number}/{len(self._versions)}"
        self.switcher.show(number, len(self._versions), locked=live)
        # when the person sent it (the ledger's ``submitted``), never the time of a later Retry or Continue
        self.sent.show(clock(message.ts) if message.ts else None)
        own = user_line(metrics, message.text)  # this message's own weight, not the whole prompt's
        self.footer.set_text(("· " if message.ts and own else "") + own)

    def _open_editor(self) -> None:
        if self.editor is None:
            with self.root:
                self.editor = ui.column().classes("w-full gap-1 items-end lc-tray-scope")
            self.editor.move(target_index=2)  # under the files and the bubble it replaces
        self.editor.clear()
        with self.editor:
            uploads = self.files.files if self.files is not None else None
            model = self.files.model if self.files is not None else None
            tray = AttachmentTray(uploads, initial=self.attachments, model=model) if uploads is not None else None
            if tray is not None and self.files is not None:
                self.files.opened(tray)
            box = (
                ui.textarea(value=self.text)
                .props('autogrow outlined dense autofocus aria-label="Edit message"')
                .classes("w-full lc-edit-box")
                .mark("edit-box")
            )

            async def save() -> None:
                if tray is not None and tray.uploading:
                    notice(WAIT_FOR_UPLOAD, "warning")
                    return
                if self.files is None or tray is None:
                    done = await self.actions.edit(self.message_id, box.value or "")
                else:
                    chosen = tray.attachments
                    done = await self.files.edit(
                        self.message_id, box.value or "", None if chosen == self.attachments else chosen
                    )
                if done:
                    self._close_editor()

            box.on("keydown.enter.exact.prevent", save)
            box.on("keydown.esc", self._close_editor)
            with ui.row().classes("gap-1 items-center"):
                if tray is not None:
                    AttachmentTray.attach_button()
                ui.button("Cancel", on_click=self._close_editor).props("flat dense no-caps").mark("edit-cancel")
                ui.button("Save", icon="send", on_click=save).props("dense no-caps unelevated").mark("edit-save")
        self.bubble.set_visibility(False)
        self.shown_files.set_visibility(False)
        self.editor.set_visibility(True)

    def _close_editor(self) -> None:
        if self.editor is not None:
            self.editor.set_visibility(False)
            self.editor.clear()
        self.bubble.set_visibility(bool(self.text) or not self.attachments)
        self.shown_files.set_visibility(bool(self.attachments))

    def _step(self, delta: int) -> None:
        index = self._versions.index(self.message_id) + delta if self.message_id in self._versions else -1
        if 0 <= index < len(self._versions):
            self.actions.select_version(self._versions[index])

    def _copy(self) -> None:
        ui.clipboard.write(self.text)
        notice("Copied", "positive")
