"""Files on a message, on the page: the tray of chips a draft (or an edit) carries, and the words for them.

Guarantees:
- A tray shows one chip per attachment before sending: name, type and size in words (``kind_words``,
  ``size_words``), a thumbnail for a raster image (``/files/{sha}/thumb``, the app's own route), a button named
  "Remove <name>", and ``data-attachment`` (the sha256). The page's script (``ui/static/attachments.js``) uploads
  what is attached through the button "Attach files", pasted or dropped, and reports each step to the tray
  (``lcfiles`` events); the tray adds only attachments this process accepted (``remember``/``accepted``), never
  what a browser merely claims, and checks the limits again (count and total per message) with a sentence naming
  the limit. The limits are rendered into the page (``data-max-*``) so the browser checks them first.
- ``uploading`` is True while an upload runs; ``on_settled(ok)`` is called when the last one ends (``ok``: none
  failed or was cancelled since the last call); ``cancel_uploads`` aborts them in the browser.
- With ``model`` (the model the draft goes to), each chip also says what that model will receive of the file
  (``ui.file_delivery``: the decision the request is built from), warning where it gets little or nothing, and a
  file it cannot read is announced once as a notice; ``model_changed`` says it again for another model.
- Nothing here touches what the user typed: a refused file is a notice, the text stays where it was.
"""

from __future__ import annotations

import inspect
import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from nicegui import background_tasks, ui
from nicegui.events import GenericEventArguments

from engine.commands import Engine
from engine.files import RASTER, FileLimits, Files, clean_name
from engine.people import acting
from ledger.events import Attachment
from ui.file_delivery import NAME_ONLY_NOTICE, said, source_words
from ui.notices import notice

log = logging.getLogger("ledger_chat.ui")
LONG_PASTE_CHARS = 5_000  # a longer paste is offered as a text file
KINDS = {
    "image/png": "PNG image",
    "image/jpeg": "JPEG image",
    "image/gif": "GIF image",
    "image/webp": "WebP image",
    "image/svg+xml": "SVG image",
    "application/pdf": "PDF",
    "text/plain": "text",
    "text/markdown": "Markdown",
    "text/csv": "CSV",
    "application/json": "JSON",
    "text/html": "HTML",
}
_ACCEPTED: OrderedDict[str, Attachment] = OrderedDict()  # sha256 → what this process's ``POST /files`` accepted
_UPLOADERS: dict[str, set[str | None]] = {}  # sha256 → who sent it (``engine.people.acting``; None: personal)
_KEEP = 4096


FilesService = Files  # what the page uses of ``engine.files``


def files_of(engine: Engine) -> Files:
    """The engine's files service (its limits, ``accept``, ``read``, ``thumbnail``)."""
    return engine.files


def size_words(size: int) -> str:
    """``812 bytes``, ``12 KB``, ``1.5 MB`` (1 KB = 1,024 bytes; whole numbers shown without decimals)."""
    if size < 1024:
        return f"{size:,} byte" + ("" if size == 1 else "s")
    for unit, scale in (("KB", 1024), ("MB", 1024**2), ("GB", 1024**3)):
        value = size / scale
        if value < 1024 or unit == "GB":
            return f"{value:,.0f} {unit}" if value >= 100 or value == int(value) else f"{value:,.1f} {unit}"
    raise AssertionError("unreachable")


def kind_words(media_type: str) -> str:
    """The type in words: ``PNG image``, ``PDF``, ``CSV``; an unknown type as it is (``application/zip``)."""
    return KINDS.get(media_type.split(";")[0].strip().lower(), media_type or "file")


def describe(attachment: Attachment) -> str:
    """``PNG image · 640×480 · 12 KB``."""
    parts = [*source_words(attachment), kind_words(attachment.media_type)]
    if attachment.width and attachment.height:
        parts.append(f"{attachment.width}×{attachment.height}")
    parts.append(size_words(attachment.size))
    return " · ".join(parts)


def over_file_limit(name: str, size: int, limits: FileLimits) -> str:
    return (
        f"{name} is {size_words(size)}; the limit is {size_words(limits.max_file_bytes)} per file. It was not "
        "attached (what you typed is still in the box)."
    )


def over_message_limit(name: str, total: int, limits: FileLimits) -> str:
    return (
        f"{name} would bring this message's files to {size_words(total)}; the limit is "
        f"{size_words(limits.max_message_bytes)} per message. It was not attached."
    )


def over_count_limit(name: str, max_files: int) -> str:
    return f"A message can carry at most {max_files} files; {name} was not attached."


def remember(attachment: Attachment) -> None:
    """Note an attachment ``POST /files`` accepted (a tray adds only these, or a message's own), and who sent it
    (team mode: only that person's tray may add it, and read it before it is sent)."""
    _ACCEPTED[attachment.sha256] = attachment
    _ACCEPTED.move_to_end(attachment.sha256)
    _UPLOADERS.setdefault(attachment.sha256, set()).add(acting())
    while len(_ACCEPTED) > _KEEP:
        _UPLOADERS.pop(_ACCEPTED.popitem(last=False)[0], None)


def uploaded_by(sha256: str, person: str | None) -> bool:
    """Whether ``person`` sent this file with ``POST /files`` (since this process started)."""
    return person in _UPLOADERS.get(sha256, ())


def accepted_name(sha256: str) -> str | None:
    """The name ``POST /files`` recorded for this file (the one a message will carry), if this process took it."""
    found = _ACCEPTED.get(sha256)
    return found.name if found is not None else None


def accepted(sha256: str, name: str) -> Attachment | None:
    found = _ACCEPTED.get(sha256) if uploaded_by(sha256, acting()) else None
    if found is None or found.name == name:
        return found
    return replace(found, name=clean_name(name))


class AttachmentTray:
    """The chips of one draft (the composer's, or an edit's), with the hidden file chooser the page's script
    opens. Build it where the chips should show; ``attach_button`` places the "Attach files" button."""

    def __init__(
        self,
        files: FilesService,
        *,
        initial: tuple[Attachment, ...] = (),
        on_settled: Callable[[bool], object] | None = None,
        main: bool = False,
        model: Callable[[], str] | None = None,
    ) -> None:
        self.files, self.limits, self.model = files, files.limits, model
        self.says: dict[str, tuple[Attachment, ui.label]] = {}  # each chip's "what the model gets" (ui.file_delivery)
        self.on_settled = on_settled
        self.items: list[Attachment] = []
        self.pending: set[int] = set()
        self.failed = False
        with ui.element("div").classes("lc-tray") as self.root:
            self.chips = ui.element("div").classes("lc-chips")
            ui.element("div").classes("lc-pending")  # the script's: uploads running (progress, cancel)
        self.root.props["data-max-file-bytes"] = str(self.limits.max_file_bytes)
        self.root.props["data-max-message-bytes"] = str(self.limits.max_message_bytes)
        self.root.props["data-max-files"] = str(self.limits.max_files)
        self.root.props["data-long-paste"] = str(LONG_PASTE_CHARS)
        if main:
            self.root.props["data-lc-main-tray"] = ""
        self.root.on("lcfiles", self._on_event, ["detail"])
        self.set(initial)

    @staticmethod
    def attach_button() -> None:
        """The "Attach files" button and the real ``<input type=file multiple>`` it opens (the script's click)."""
        ui.button(icon="attach_file").props('flat dense round aria-label="Attach files" title="Attach files"').classes(
            "lc-attach-button"
        ).mark("attach")
        ui.element("input").props("type=file multiple tabindex=-1 aria-hidden=true").classes("lc-file-input lc-sr-only")

    @property
    def attachments(self) -> tuple[Attachment, ...]:
        return tuple(self.items)

    @property
    def uploading(self) -> bool:
        return bool(self.pending)

    def set(self, attachments: tuple[Attachment, ...]) -> None:
        self.items, self.says = [], {}
        self.chips.clear()
        for attachment in attachments:  # chips put back (a chat switched to, an edit opened): said, not announced
            self._add(attachment)
        self._note_usage()

    def clear(self) -> None:
        self.set(())

    def cancel_uploads(self) -> None:
        self.root.client.run_javascript(f"window.lcFiles && window.lcFiles.cancel('c{self.root.id}')")

    def _add(self, attachment: Attachment, announce: bool = False) -> None:
        self.items.append(attachment)
        with self.chips, ui.element("div").classes("lc-chip") as chip:
            chip.props["data-attachment"] = attachment.sha256
            chip.props["title"] = attachment.name
            if attachment.media_type in RASTER:
                thumb = ui.element("img").classes("lc-chip-thumb")
                thumb.props["src"] = f"/files/{attachment.sha256}/thumb"
                thumb.props["alt"] = ""
            with ui.element("span").classes("lc-chip-text"):
                ui.label(attachment.name).classes("lc-chip-name")
                ui.label(describe(attachment)).classes("lc-meta lc-chip-kind")
                if self.model is not None:
                    self.says[attachment.sha256] = (attachment, ui.label("").classes("lc-meta lc-chip-delivery"))
                    background_tasks.create(self._say(attachment.sha256, announce), name="what the model gets")
            remove = ui.button(icon="close", on_click=lambda: self._remove(attachment.sha256, chip))
            remove.props("flat dense round size=xs").mark("remove-attachment")
            remove.props["aria-label"] = f"Remove {attachment.name}"
            remove.props["title"] = f"Remove {attachment.name}"

    def model_changed(self) -> None:
        """The page picked another model: every chip says again what that model gets."""
        for sha256 in list(self.says):
            background_tasks.create(self._say(sha256), name="what the model gets")

    async def _say(self, sha256: str, announce: bool = False) -> None:
        if self.model is None or sha256 not in self.says:
            return
        attachment, label = self.says[sha256]
        model = self.model()
        how, words, warns = await said(self.files, attachment, model)
        if label.is_deleted or self.model() != model:  # gone, or asked again for the model picked since
            return
        label.set_text(words)
        label.props["data-delivery"] = how
        label.classes(add="lc-chip-warn" if warns else "", remove="" if warns else "lc-chip-warn")
        if announce and how == "name-only":
            with self.root:
                notice(NAME_ONLY_NOTICE.format(name=attachment.name), "warning", multi_line=True)

    def _remove(self, sha256: str, chip: ui.element) -> None:
        self.items = [a for a in self.items if a.sha256 != sha256]
        self.says.pop(sha256, None)
        chip.delete()
        self._note_usage()

    def _note_usage(self) -> None:
        self.root.props["data-used-bytes"] = str(sum(a.size for a in self.items))
        self.root.props["data-used-files"] = str(len(self.items))
        self.root.update()

    async def _on_event(self, e: GenericEventArguments) -> None:
        detail: dict[str, Any] = (e.args or {}).get("detail") or {}
        kind = detail.get("kind")
        name = clean_name(str(detail.get("name") or "the file"))
        if kind == "refused":
            self._refused(str(detail.get("why")), name, int(detail.get("size") or 0))
        elif kind == "start":
            self.pending.add(int(detail.get("id") or 0))
        elif kind == "done":
            self.pending.discard(int(detail.get("id") or 0))
            if detail.get("ok"):
                for item in detail.get("files") or ():
                    self._arrived(item)
            else:
                self.failed = True
                if not detail.get("cancelled"):
                    notice(str(detail.get("error") or f"The upload of {name} failed."), "warning", multi_line=True)
            if not self.pending:
                ok, self.failed = not self.failed, False
                settled = self.on_settled(ok) if self.on_settled is not None else None
                if inspect.isawaitable(settled):
                    await settled

    def _refused(self, why: str, name: str, size: int) -> None:
        if why == "file":
            notice(over_file_limit(name, size, self.limits), "warning", multi_line=True)
        elif why == "message":
            notice(over_message_limit(name, size, self.limits), "warning", multi_line=True)
        else:
            notice(over_count_limit(name, self.limits.max_files), "warning", multi_line=True)

    def _arrived(self, item: object) -> None:
        if not isinstance(item, dict):
            return
        attachment = accepted(str(item.get("sha256", "")), str(item.get("name", "")))
        if attachment is None:
            log.warning("a page reported an attachment this process did not accept; ignored")
            return
        self.offer(attachment)

    def offer(self, attachment: Attachment) -> None:
        """A chip for a file this process accepted (uploaded, or fetched from a tool server), within the limits."""
        if any(a.sha256 == attachment.sha256 for a in self.items):
            return  # the same bytes twice: one chip
        if len(self.items) >= self.limits.max_files:
            self._refused("count", attachment.name, attachment.size)
            return
        total = sum(a.size for a in self.items) + attachment.size
        if total > self.limits.max_message_bytes:
            self._refused("message", attachment.name, total)
            return
        self._add(attachment, announce=True)
        self._note_usage()
