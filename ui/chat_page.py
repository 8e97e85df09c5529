"""The chat page: conversation list, the chat, the audit panel; each conversation at its own URL.

Guarantees:
- Everything on screen is a projection of the engine's state (the ledger): a returning viewer, a second tab or
  a reload is rebuilt from it and then follows the same events live.
- Updates are coalesced: the page flushes at most every 100 ms while streaming, and at once when an attempt
  starts or ends; each message view sends only what changed.
- Input: Enter sends (never stops), Shift+Enter adds a line, Esc stops; Send becomes Stop while an answer
  streams, disabled for the first 0.3 s so that a double click on Send cannot stop what it just sent; empty input
  does nothing; a rejected message stays in the box with a clear notice.
- Leaving (navigation, reload, closed tab) is reported to the engine, which applies the leave policy.
"""

from __future__ import annotations

import time

from nicegui import background_tasks, ui
from nicegui.events import KeyEventArguments, ValueChangeEventArguments

from engine.engine import Engine, InputRejected
from ledger.events import AnyEvent, CancelSource
from ledger.state import ConversationState
from ui.audit_panel import AuditPanel
from ui.context import context
from ui.message_view import Actions, AssistantMessageView, UserMessageView
from ui.sidebar import Sidebar
from ui.style import add_style

STOP_GUARD_SECONDS = 0.3  # Stop stays disabled this long after Send: a double click never stops
FLUSH_SECONDS = 0.1  # coalesce streaming updates to at most ~10 per second
AUDIT_SECONDS = 0.5  # the audit panel folds the whole ledger: refresh it at most twice a second while streaming
FLUSH_NOW = frozenset(
    {
        "submitted",
        "started",
        "cancel_requested",
        "cancelled",
        "failed",
        "done",
        "persisted",
        "selected",
        "recovered",
        "retrying",
        "deleted",
    }
)
LIST_KINDS = frozenset({"created", "renamed", "deleted", "submitted", "started", "persisted"})


class ChatPage:
    left: ui.left_drawer
    right: ui.right_drawer

    def __init__(self, engine: Engine, cid: str | None) -> None:
        self.engine = engine
        self.cid = cid
        self.client = ui.context.client
        self.views: dict[str, UserMessageView | AssistantMessageView] = {}
        self.seen: dict[str, object] = {}
        self.dirty = True
        self.list_dirty = False
        self.audit_dirty = False
        self.audit_at = 0.0
        self.urgent = False
        self.leaving: CancelSource | None = None
        self.sending = False
        self.stop_guard_until = 0.0
        self.shown_turn: int | None = None
        self.actions = Actions(retry=self.retry, select=self.select, audit=self.open_audit)

    def build(self) -> None:
        ctx = context()
        add_style()
        dark = ui.dark_mode()
        with ui.header().classes("lc-header items-center gap-2 px-3 py-1"):
            ui.button(icon="menu", on_click=lambda: self.left.toggle()).props('flat round dense aria-label="Chats"')
            ui.label("Ledger Chat").classes("text-lg font-medium")
            ui.label(ctx.model_label).classes("lc-model-badge").mark("model-label")
            ui.space()
            ui.button(icon="dark_mode", on_click=dark.toggle).props('flat round dense aria-label="Dark mode"')
            ui.button(icon="timeline", on_click=lambda: self.right.toggle()).props(
                'flat round dense aria-label="Audit panel"'
            ).mark("audit-toggle")
        with ui.left_drawer().props("width=280 breakpoint=800").classes("lc-drawer") as self.left:
            self.sidebar = Sidebar(self.engine, self.cid, self.navigate, self.after_delete)
        with ui.right_drawer(value=False).props("width=380 breakpoint=800").classes("lc-drawer") as self.right:
            self.audit = AuditPanel(self.engine)
            self.audit.cid = self.cid
        self.right.on_value_change(self._audit_toggled)
        with ui.column().classes("lc-main w-full max-w-3xl mx-auto gap-3 px-3 pb-4"):
            for problem in ctx.problems:
                with (
                    ui.card().classes("w-full lc-warning").mark("problem") as card,
                    ui.row().classes("w-full items-start no-wrap"),
                ):
                    ui.icon("warning", color="orange")
                    ui.label(problem).classes("flex-grow break-words")
                    ui.button(icon="close", on_click=card.delete).props('flat dense round aria-label="Dismiss"')
            self.empty = ui.column().classes("w-full items-center py-10 lc-meta")
            with self.empty:
                ui.label("Ask anything.").classes("text-xl")
                if ctx.config.is_demo:
                    ui.label(
                        "Demo model: add #slow, #drop, #stall, #429, #500, #401, #malformed or #html to a "
                        "message to watch Stop, Retry and the audit panel handle a fault."
                    ).classes("text-center")
            self.messages = ui.column().classes("w-full gap-4").mark("messages")
        with ui.footer().classes("lc-footer"), ui.row().classes("w-full max-w-3xl mx-auto items-end gap-2 no-wrap"):
            self.input = (
                ui.textarea(label="Message", placeholder="Message (Enter to send, Shift+Enter for a new line)")
                .props("autogrow outlined dense autofocus maxlength=200000")
                .classes("flex-grow")
                .mark("message-input")
            )
            self.input.on("keydown.enter.exact.prevent", self.send)
            self.input.on("keydown.esc", self.stop)
            self.button = ui.button("Send", icon="send", on_click=self.send_or_stop).props("no-caps").mark("send")
        ui.keyboard(on_key=self._on_key)  # Esc anywhere on the page; inside the message box its own listener stops
        self.unsubscribe = self.engine.subscribe(self.on_event)
        self.client.on_delete(self._on_client_delete)
        ui.timer(FLUSH_SECONDS, self.flush)
        self.flush()
        if self.cid is not None:
            background_tasks.create(self.engine.viewer_joined(self.cid, self.client.id), name="viewer joined")

    # --- events from the engine --------------------------------------------------------------------------------

    def on_event(self, event: AnyEvent) -> None:
        if event.KIND in LIST_KINDS:
            self.list_dirty = True
        if event.conversation_id != self.cid:
            return
        self.dirty = True
        self.audit_dirty = True
        if event.KIND in FLUSH_NOW:
            self.urgent = True
            self.flush()

    def flush(self) -> None:
        if self.list_dirty:
            self.list_dirty = False
            self.sidebar.refresh()
        if not self.dirty:
            return
        self.dirty = False
        urgent, self.urgent = self.urgent, False
        conv = self.engine.conversation(self.cid) if self.cid else None
        if self.cid is not None and conv is None:
            self._show_gone()
            return
        self._render(conv)
        if self.audit_dirty and self.right.value and (urgent or time.monotonic() - self.audit_at >= AUDIT_SECONDS):
            self.audit_dirty, self.audit_at = False, time.monotonic()
            self.audit.refresh()

    def _render(self, conv: ConversationState | None) -> None:
        live = conv.live_attempt() if conv is not None else None
        streaming = live is not None
        # the turn this page shows streaming: Stop cancels that turn only, never a newer one started elsewhere
        self.shown_turn = conv.messages[live.message_id].turn if conv is not None and live is not None else None
        self.empty.set_visibility(conv is None or not conv.message_ids)
        if conv is not None:
            last_assistant = next((m for m in reversed(conv.message_ids) if conv.messages[m].role == "assistant"), None)
            for message_id in conv.message_ids:
                message = conv.messages[message_id]
                view = self.views.get(message_id)
                if view is None:
                    with self.messages:
                        view = (
                            UserMessageView(message)
                            if message.role == "user"
                            else AssistantMessageView(message_id, self.actions)
                        )
                    self.views[message_id] = view
                attempt = conv.attempts.get(message.selected_attempt_id or "")
                key = (message, attempt, message_id == last_assistant)
                if self.seen.get(message_id) == key:
                    continue
                self.seen[message_id] = key
                if isinstance(view, AssistantMessageView):
                    view.update(conv, is_last=message_id == last_assistant)
                else:
                    view.update(message)
        label = "Stop" if streaming else "Send"
        if self.button.text != label:
            self.button.set_text(label)
            self.button.props(f"icon={'stop' if streaming else 'send'} color={'negative' if streaming else 'primary'}")

    # --- user actions ------------------------------------------------------------------------------------------

    async def send_or_stop(self) -> None:
        if self.cid is not None and self.engine.is_streaming(self.cid):
            if time.monotonic() < self.stop_guard_until:
                return  # a click sent before the browser saw the button disabled: the tail of a double click
            await self.stop()
        else:
            await self.send()

    async def send(self) -> None:
        text = self.input.value or ""
        if self.sending or not text.strip():
            return
        limit = self.engine.settings.max_input_chars
        if len(text) > limit:
            ui.notify(
                f"This message has {len(text):,} characters; the limit is {limit:,}. Shorten it and send again "
                "(your text is still in the box).",
                type="warning",
                multi_line=True,
            )
            return
        self.sending = True
        self.button.disable()  # until STOP_GUARD_SECONDS after the submit: a double click never reaches Stop
        try:
            if self.cid is None:
                self.cid = self.engine.create_conversation()
                self.sidebar.current = self.audit.cid = self.cid
                ui.navigate.history.replace(f"/chat/{self.cid}")
                await self.engine.viewer_joined(self.cid, self.client.id)
            self.input.value = ""
            await self.engine.submit(self.cid, text)
            self.stop_guard_until = time.monotonic() + STOP_GUARD_SECONDS
            ui.timer(STOP_GUARD_SECONDS, self.button.enable, once=True)
        except InputRejected as exc:
            self.input.value = text
            self.button.enable()
            ui.notify(str(exc), type="warning")
        finally:
            self.sending = False

    async def stop(self) -> None:
        if self.cid is not None and self.shown_turn is not None:
            await self.engine.cancel(self.cid, "user", turn=self.shown_turn)

    async def retry(self, message_id: str) -> None:
        if self.cid is None:
            return
        try:
            await self.engine.retry(self.cid, message_id)
        except InputRejected as exc:
            ui.notify(str(exc), type="warning")

    def select(self, message_id: str, attempt_id: str) -> None:
        if self.cid is None:
            return
        try:
            self.engine.select_attempt(self.cid, message_id, attempt_id)
        except InputRejected as exc:
            ui.notify(str(exc), type="warning")

    def open_audit(self, message_id: str) -> None:
        self.right.set_value(True)
        self.audit.show(self.cid, message_id)

    def navigate(self, url: str) -> None:
        self.leaving = "navigation"
        ui.navigate.to(url)

    async def after_delete(self, cid: str) -> None:
        if cid == self.cid:
            self.navigate("/")
        else:
            self.sidebar.refresh()

    # --- helpers -----------------------------------------------------------------------------------------------

    def _audit_toggled(self, e: ValueChangeEventArguments[bool | None]) -> None:
        if e.value:
            self.audit.show(self.cid)

    async def _on_key(self, e: KeyEventArguments) -> None:
        if e.key == "Escape" and e.action.keydown:
            await self.stop()

    def _show_gone(self) -> None:
        self.messages.clear()
        self.views.clear()
        with self.messages:
            ui.label("This conversation was deleted.").classes("lc-meta").mark("gone")
        self.input.disable()
        self.button.disable()

    async def _on_client_delete(self) -> None:
        self.unsubscribe()
        if self.cid is not None:
            await self.engine.viewer_left(self.cid, self.client.id, self.leaving or "disconnect")
