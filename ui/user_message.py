"""A user message: its text, when it was sent and its tokens, and what a person can do with it.

Guarantees: the text is shown as plain text (never markup); Copy, Edit and Branch are buttons with those names;
Edit opens the text in place (also while a later answer streams: Save stops it first) and Save sends it as a new
version with a new answer (what followed the old version stays in its branch), Cancel or Esc leaves everything as
it was, and a refused edit keeps the box open with the
text; versions are browsable with ‹ n/m › (``data-version``); the turn stats are those of the answer shown below
it (the attempt the reader sees), not of a later retry.
"""

from __future__ import annotations

from nicegui import ui

from ledger.events import TurnMetrics
from ledger.state import ConversationState, MessageState
from ledger.tree import versions
from ui.format import clock, user_line
from ui.notices import notice
from ui.widgets import Actions, Switcher, TimeLabel


class UserMessageView:
    def __init__(self, message: MessageState, actions: Actions) -> None:
        self.message_id = message.message_id
        self.actions = actions
        self.text = message.text
        self._versions: tuple[str, ...] = (message.message_id,)
        self._shown: tuple[object, ...] | None = None
        with ui.column().classes("lc-user self-end items-end gap-0 max-w-[85%]").mark("user-message") as self.root:
            self.bubble = ui.label(message.text).classes("lc-bubble whitespace-pre-wrap break-words")
            self.editor: ui.column | None = None  # built when Edit is pressed
            with ui.row().classes("gap-1 items-center no-wrap"):
                self.switcher = Switcher("version", "version", self._step)
                self.sent = TimeLabel(prefix="sent ")
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
        key = (number, len(self._versions), metrics, live)
        if key == self._shown:
            return
        self._shown = key
        self.root.props["data-version"] = f"{number}/{len(self._versions)}"
        self.switcher.show(number, len(self._versions), locked=live)
        self.sent.show(clock(metrics.sent_at) if metrics is not None and metrics.sent_at else None)
        self.footer.set_text(("· " if metrics is not None and metrics.sent_at else "") + user_line(metrics))

    def _open_editor(self) -> None:
        if self.editor is None:
            with self.root:
                self.editor = ui.column().classes("w-full gap-1 items-end")
            self.editor.move(target_index=1)  # under the bubble it replaces
        self.editor.clear()
        with self.editor:
            box = (
                ui.textarea(value=self.text)
                .props('autogrow outlined dense autofocus aria-label="Edit message"')
                .classes("w-full lc-edit-box")
                .mark("edit-box")
            )

            async def save() -> None:
                if await self.actions.edit(self.message_id, box.value or ""):
                    self._close_editor()

            box.on("keydown.enter.exact.prevent", save)
            box.on("keydown.esc", self._close_editor)
            with ui.row().classes("gap-1"):
                ui.button("Cancel", on_click=self._close_editor).props("flat dense no-caps").mark("edit-cancel")
                ui.button("Save", icon="send", on_click=save).props("dense no-caps unelevated").mark("edit-save")
        self.bubble.set_visibility(False)
        self.editor.set_visibility(True)

    def _close_editor(self) -> None:
        if self.editor is not None:
            self.editor.set_visibility(False)
            self.editor.clear()
        self.bubble.set_visibility(True)

    def _step(self, delta: int) -> None:
        index = self._versions.index(self.message_id) + delta if self.message_id in self._versions else -1
        if 0 <= index < len(self._versions):
            self.actions.select_version(self._versions[index])

    def _copy(self) -> None:
        ui.clipboard.write(self.text)
        notice("Copied", "positive")
