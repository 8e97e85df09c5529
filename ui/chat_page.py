"""The chat page: header, conversation list, transcript, composer and audit panel, assembled; one URL per chat.

Guarantees:
- Everything on screen is a projection of the engine's state (the ledger): a returning viewer, a second tab or
  a reload is rebuilt from it and then follows the same events live (through ``RefreshScheduler``).
- Every user action goes through the engine: send, Stop (of the turn shown, never a newer one), Retry, choosing an
  attempt, rename, delete; a refusal is shown as a notice and loses nothing.
- Leaving (navigation, reload, closed tab) is reported to the engine, which applies the leave policy.
"""

from __future__ import annotations

from nicegui import background_tasks, ui
from nicegui.events import KeyEventArguments, ValueChangeEventArguments

from engine.engine import InputRejected
from ledger.events import CancelSource
from ledger.state import ConversationState
from ui.audit_panel import AuditPanel
from ui.composer import Composer
from ui.context import PageContext
from ui.format import announcement, model_label
from ui.health_banner import HealthBanner
from ui.notices import notice
from ui.refresh import FLUSH_SECONDS, RefreshScheduler
from ui.sidebar import Sidebar
from ui.style import add_style
from ui.tool_servers import ToolServersPanel
from ui.transcript import Transcript
from ui.widgets import Actions


class ChatPage:
    def __init__(self, context: PageContext, cid: str | None) -> None:
        self.context = context
        self.engine = context.require_engine()
        self.cid = cid
        self.client = ui.context.client
        self.leaving: CancelSource | None = None
        self.shown_attempt: str | None = None
        self.model = self._model_of(cid)
        self.title = "Ledger Chat"
        self.live_was: str | None = None

    def build(self) -> None:
        add_style()
        self.client.layout.props('view="hHh lpR lFr"')  # the message box centres on the chat column, not the window
        self._header()
        with ui.left_drawer().props("width=280 breakpoint=800").classes("lc-drawer") as self.left:
            self.sidebar = Sidebar(self.engine, self.cid, self.navigate, self.after_delete)
            ui.separator().classes("my-2")
            self.tool_servers = ToolServersPanel(self.engine)
        with ui.right_drawer(value=False).props("width=380 breakpoint=800").classes("lc-drawer") as self.right:
            self.audit = AuditPanel(self.engine)
            self.audit.cid = self.cid
        self.right.on_value_change(self._audit_toggled)
        self.announcer = ui.label("").classes("lc-sr-only").props("role=status aria-live=polite").mark("announcer")
        with ui.column().classes("lc-main w-full max-w-3xl mx-auto gap-3 px-3 pb-4"):
            HealthBanner(self.engine)
            actions = Actions(
                retry=self.retry,
                select=self.select,
                audit=self.open_audit,
                decide=self.decide_tool,
                edit=self.edit,
                select_version=self.select_version,
                branch=self.branch,
                open_chat=lambda cid: self.navigate(f"/chat/{cid}"),
                models=self.engine.settings.models,
            )
            self.transcript = Transcript(actions, demo=self.context.demo)
        with ui.footer().classes("lc-footer"):
            self.composer = Composer(
                submit=self.submit,
                stop=self.stop,
                streaming=lambda: self.cid is not None and self.engine.is_streaming(self.cid),
                max_chars=self.engine.settings.limits.max_input_chars,
            )
            if self.cid is not None and self.cid in self.context.drafts:
                self.composer.input.value = self.context.drafts.pop(self.cid)
        ui.keyboard(on_key=self._on_key)  # Esc anywhere on the page; inside the message box its own listener stops
        self.refresh = RefreshScheduler(
            conversation=lambda: self.cid,
            render_chat=self.render,
            render_list=self._render_lists,
            render_audit=self.audit.refresh,
            audit_open=lambda: bool(self.right.value),
        )
        self.unsubscribe = self.engine.subscribe(self.refresh.on_event)
        self.client.on_delete(self._on_client_delete)
        ui.timer(FLUSH_SECONDS, self.refresh.flush)
        ui.timer(1.0, self.tool_servers.refresh)  # server health changes outside any conversation
        self.refresh.flush()
        if self.cid is not None:
            background_tasks.create(self.engine.viewer_joined(self.cid, self.client.id), name="viewer joined")

    def render(self) -> None:
        conv = self.engine.conversation(self.cid) if self.cid else None
        if self.cid is not None and conv is None:
            self.transcript.show_gone()
            self.composer.disable()
            return
        self.shown_attempt = self.transcript.render(conv)
        self.composer.show_streaming(self.shown_attempt is not None)
        if conv is not None:
            self._announce(conv)
            title = f"{conv.title or 'New conversation'} · Ledger Chat"
            if title != self.title:
                self.title = title
                ui.page_title(title)

    # --- user actions ------------------------------------------------------------------------------------------

    async def submit(self, text: str) -> str | None:
        try:
            if self.cid is None:
                self.cid = self.engine.create_conversation()
                self.sidebar.current = self.audit.cid = self.cid
                ui.navigate.history.replace(f"/chat/{self.cid}")
                await self.engine.viewer_joined(self.cid, self.client.id)
            await self.engine.submit(self.cid, text, model=self.model)
        except InputRejected as exc:
            return str(exc)
        return None

    async def stop(self) -> None:
        if self.cid is not None and self.shown_attempt is not None:
            await self.engine.cancel(self.cid, "user", attempt_id=self.shown_attempt)

    async def retry(self, message_id: str, model: str | None = None) -> None:
        if self.cid is None:
            return
        try:
            await self.engine.retry(self.cid, message_id, model=model or self.model)
        except InputRejected as exc:
            notice(str(exc), "warning")

    async def edit(self, message_id: str, text: str) -> bool:
        """Send an edited version; a refusal is shown and the editor stays open with the text."""
        if self.cid is None:
            return False
        try:
            await self.engine.edit(self.cid, message_id, text, model=self.model)
        except InputRejected as exc:
            notice(str(exc), "warning")
            return False
        return True

    def select_version(self, message_id: str) -> None:
        if self.cid is None:
            return
        try:
            self.engine.select_version(self.cid, message_id)
        except InputRejected as exc:
            notice(str(exc), "warning")

    def branch(self, message_id: str) -> None:
        if self.cid is None:
            return
        try:
            new_cid, draft = self.engine.branch(self.cid, message_id)
        except InputRejected as exc:
            notice(str(exc), "warning")
            return
        if draft is not None:
            self.context.drafts[new_cid] = draft
        self.navigate(f"/chat/{new_cid}")

    def decide_tool(self, call_id: str, run_it: bool) -> None:
        if self.cid is None:
            return
        try:
            self.engine.decide_tool(self.cid, call_id, run_it)
        except InputRejected as exc:
            notice(str(exc), "warning")

    def select(self, message_id: str, attempt_id: str) -> None:
        if self.cid is None:
            return
        try:
            self.engine.select_attempt(self.cid, message_id, attempt_id)
        except InputRejected as exc:
            notice(str(exc), "warning")

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

    # --- parts and helpers -------------------------------------------------------------------------------------

    def _header(self) -> None:
        with ui.header().classes("lc-header items-center gap-2 px-3 py-1 no-wrap"):
            ui.button(icon="menu", on_click=lambda: self.left.toggle()).props(
                'flat round dense color=white aria-label="Chats"'
            )
            ui.label("Ledger Chat").classes("text-lg font-medium gt-xs")
            models = self.engine.settings.models
            if len(models) > 1:
                picker = ui.select(
                    {m: model_label(m) for m in models}, value=self.model, on_change=self._model_changed
                ).props('dense dark borderless options-dense aria-label="Model for the next answer"')
                picker.classes("lc-model-picker").mark("model-picker")
            else:
                ui.label(self.context.model_label).classes("lc-model-badge").mark("model-label")
            ui.space()
            with ui.button().props('flat round dense color=white aria-label="Switch between light and dark"') as theme:
                ui.icon("dark_mode").classes("lc-when-light")
                ui.icon("light_mode").classes("lc-when-dark")
            theme.on("click", js_handler="() => window.lcTheme && window.lcTheme.toggle()")
            ui.button(icon="timeline", on_click=lambda: self.right.toggle()).props(
                'flat round dense color=white aria-label="Audit panel"'
            ).mark("audit-toggle")

    def _model_of(self, cid: str | None) -> str:
        """The model this chat answered with last (if still offered), else the app's default."""
        conv = self.engine.conversation(cid) if cid else None
        models = self.engine.settings.models
        if conv is not None:
            last = max(conv.attempts.values(), key=lambda a: a.started_ts, default=None)
            if last is not None and last.model in models:
                return last.model
        return models[0]

    def _model_changed(self, e: ValueChangeEventArguments[str]) -> None:
        if e.value in self.engine.settings.models:
            self.model = e.value

    def _announce(self, conv: ConversationState) -> None:
        """Tell a screen reader once when an answer ends (never per token)."""
        live = conv.live_attempt()
        if live is not None:
            self.live_was = live.attempt_id
            return
        if self.live_was is None:
            return
        ended = conv.attempts.get(self.live_was)
        self.live_was = None
        if ended is not None:
            self.announcer.set_text(announcement(ended))

    def _render_lists(self) -> None:
        self.sidebar.refresh()
        self.tool_servers.refresh()

    def _audit_toggled(self, e: ValueChangeEventArguments[bool | None]) -> None:
        if e.value:
            self.audit.show(self.cid)

    async def _on_key(self, e: KeyEventArguments) -> None:
        if e.key == "Escape" and e.action.keydown:
            await self.stop()

    async def _on_client_delete(self) -> None:
        self.unsubscribe()
        if self.cid is not None:
            await self.engine.viewer_left(self.cid, self.client.id, self.leaving or "disconnect")
