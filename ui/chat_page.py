"""The chat page: header, conversation list, transcript, composer and audit panel, assembled; one URL per chat.

Guarantees:
- Everything on screen is a projection of the engine's state (the ledger): a returning viewer, a second tab or
  a reload is rebuilt from it and then follows the same events live (through ``RefreshScheduler``).
- Every user action goes through the engine; a refusal is a notice and loses nothing. A Send the store cannot
  record (a ``StoreError``) is refused in a sentence that says why; its text stays in the box, nothing reached the
  model (the engine starts an answer only after the submit was recorded).
- Choosing another chat (the list, search, a branch link, the browser's Back and Forward) switches in place: the
  URL follows (``/chat/{id}``), the page is not reloaded, each chat keeps its unsent draft while the page lives.
- Leaving a chat (switching, navigation, reload, closed tab) is reported to the engine (its leave policy).
"""

from __future__ import annotations

from nicegui import background_tasks, ui
from nicegui.events import GenericEventArguments, KeyEventArguments, ValueChangeEventArguments

from engine.commands import InputRejected
from ledger.errors import StoreError
from ledger.events import Attachment
from ledger.search import Hit
from ui.announcer import EndAnnouncer
from ui.attachments import files_of
from ui.audit_panel import AuditPanel
from ui.composer import Composer
from ui.context import PageContext
from ui.context_meter import ContextMeter
from ui.grants_panel import GrantsPanel
from ui.header import build_header
from ui.health_banner import HealthBanner
from ui.message_actions import MessageActions
from ui.notices import not_recorded, notice
from ui.pending import PendingMessage
from ui.preset_picker import PresetBar, preset_instructions, preset_model
from ui.queued import QueuedPanel
from ui.refresh import RefreshScheduler
from ui.sidebar import Sidebar
from ui.style import add_style
from ui.surface import add_surface, audit_close_button, audit_takes_the_lists_place, close_chats_on_phone
from ui.tool_servers import ToolServersPanel
from ui.transcript import Transcript
from ui.user_message import EditFiles

PAINTED = "'lc-painted'"  # a round trip to the browser: its answer comes after what was sent before it


class ChatPage:
    def __init__(self, context: PageContext, cid: str | None, preset: str | None = None) -> None:
        self.context = context
        self.engine, self.viewer = context.require_engine(), context.viewer()  # whose chats it may reach
        self.cid = cid
        self.client = ui.context.client
        self.shown_attempt: str | None = None
        self.model = self.engine.presets.model_of(self.engine.conversation(cid) if cid else None)
        self.title = "Ledger Chat"
        self.switches = 0  # in-place switches asked for; only the latest one is carried out
        self.drafts: dict[str, str] = {}  # "" = the new chat; per chat, the message box text while switched away
        self.draft_files: dict[str, tuple[Attachment, ...]] = {}  # and the files attached to it
        self.files = files_of(self.engine)
        self.preset = self.engine.presets.of_chat(self.engine.conversation(cid) if cid else None, preset, self.viewer)
        self.model = preset_model(self.engine, self.preset, self.viewer) if preset else self.model

    def build(self) -> None:
        add_style()
        add_surface()
        self.client.layout.props('view="hHh lpR lFr"')  # the message box centres on the chat column, not the window
        self.picker, self.heading = build_header(
            badge=self.context.model_label,
            models=self.engine.settings.models,
            model=self.model,
            on_model=self._use_model,
            toggle_chats=lambda: self.left.toggle(),
            toggle_audit=lambda: self.right.toggle(),
            extra=self._preset_bar,
            person=self.context.person() if self.context.team else None,
        )
        with ui.left_drawer().props("width=280 breakpoint=800").classes("lc-drawer lc-chats-drawer") as self.left:
            self.sidebar = Sidebar(self.engine, self.cid, self.switch_to, self.after_delete, self.open_hit, self.viewer)
            with self.sidebar.foot:
                self.tool_servers = ToolServersPanel(self.engine, self.context.tools, self.viewer)
                self.grants = GrantsPanel(self.engine, self.viewer.person, self.tool_servers.show_grants)
        audit_drawer = ui.right_drawer(value=False).props("width=380 breakpoint=800")
        with audit_drawer.classes("lc-drawer lc-audit-drawer") as self.right:
            audit_close_button(self.right)
            self.audit = AuditPanel(self.engine)
            self.audit.cid = self.cid
        self.right.on_value_change(self._audit_toggled)
        audit_takes_the_lists_place(self.left, self.right)
        self.announcer = EndAnnouncer()
        with ui.column().classes("lc-main w-full max-w-3xl mx-auto gap-3 px-3 pb-4"):
            HealthBanner(self.engine, self.context.health)
            actions = MessageActions(
                self.engine,
                cid=lambda: self.cid,
                model=lambda: self.model,
                preset=lambda: self.preset,
                open_chat=lambda cid: background_tasks.create(self.switch_to(cid), name="open chat"),
                open_audit=self.open_audit,
                drafts=self.context.drafts,
                viewer=self.viewer,
            )
            self.edits = EditFiles.of(self)  # its files, chat, model, preset and message box (a Refresh adds to it)
            self.transcript = Transcript(actions.actions(), demo=self.context.demo, files=self.edits)
            self.pending = PendingMessage(empty=self.transcript.empty, settled=lambda: self.refresh.flush_in_slot())
            self.queued = QueuedPanel(self.engine, lambda: self.cid)  # messages sent after the answer (ui.queued)
        with ui.footer().classes("lc-footer"):
            told = lambda: preset_instructions(self.engine, self.preset, self.viewer)  # noqa: E731 - the meter counts them too
            self.meter = ContextMeter(self.engine, lambda: self.cid, lambda: self.model, told)  # ui.context_meter
            self.composer = Composer(
                submit=self.submit,
                stop=self.stop,
                streaming=lambda: self.cid is not None and self.engine.is_streaming(self.cid),
                max_chars=self.engine.settings.limits.max_input_chars,
                files=self.files,
                pending=self.pending,
                model=lambda: self.model,
            )
            self.queued.add_queue_button(self.composer)
            if self.cid is not None and self.cid in self.context.drafts:
                self.composer.input.value = self.context.drafts.pop(self.cid)
        ui.on("lc-route", self._on_route)  # Back/Forward within the page (ledger.js)
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
        self.refresh.flush()
        if self.cid is not None:
            background_tasks.create(self.engine.viewer_joined(self.cid, self.client.id), name="viewer joined")
            background_tasks.create(self._fill_when_shown(self.cid), name="fill the transcript")

    def render(self) -> None:
        conv = self.engine.conversation(self.cid) if self.cid else None
        self.queued.render(conv)
        if self.cid is not None and conv is None:
            self.transcript.show_gone()
            self.composer.disable()
            return
        self.shown_attempt = self.transcript.render(conv)
        self.grants.follow(self.cid, conv)
        self.bar.update(conv)  # the chat's cost in the header
        self.composer.show_streaming(self.shown_attempt is not None)
        self.meter.show(conv)
        if conv is not None:
            self.announcer.update(conv)
            self._set_title(f"{conv.title or 'New conversation'} · Ledger Chat")

    async def switch_to(self, cid: str | None, *, push: bool = True) -> None:
        """Show another chat (None: a new one) in place; the URL follows unless it already did (Back/Forward). When
        clicks overtake each other (a big chat still being read), the last one wins. Another's chat: as missing."""
        self.switches = mine = self.switches + 1
        conv = await self.engine.load(cid, self.viewer) if cid is not None else None  # read off the loop
        if mine != self.switches or self.client.is_deleted:
            return  # a later switch was asked for meanwhile, or the page went away
        with self.client:  # called from dialogs and list items that may be gone by now
            close_chats_on_phone(self.left)
            if cid is not None and conv is None:
                notice("That conversation does not exist (it may have been deleted).", "warning")
                cid = None
            if cid == self.cid:
                return
            old = self.cid
            self._show(cid, push=push)
        if cid is not None:
            await self.engine.viewer_joined(cid, self.client.id)
        if old is not None:
            await self.engine.viewer_left(old, self.client.id, "navigation")

    def _show(self, cid: str | None, *, push: bool) -> None:
        self.drafts[self.cid or ""] = self.composer.input.value or ""
        self.draft_files[self.cid or ""] = self.composer.attachments
        self.cid = self.audit.cid = cid
        self.shown_attempt = None
        self.announcer.forget()
        self.transcript.reset()
        self.composer.enable()
        self.composer.input.value = self.drafts.pop(cid or "", "")
        if cid is not None and cid in self.context.drafts:  # a branch at a user message: its text, ready to change
            self.composer.input.value = self.context.drafts.pop(cid)
        if self.composer.tray is not None:
            self.composer.tray.set(self.draft_files.pop(cid or "", ()))
        self.model = self.engine.presets.model_of(self.engine.conversation(cid) if cid else None)
        self.preset = self.engine.presets.of_chat(self.engine.conversation(cid) if cid else None, None, self.viewer)
        self.bar.show(self.preset)
        if self.picker is not None:
            self.picker.value = self.model
        self.sidebar.select(cid)
        if push:
            ui.navigate.history.push(f"/chat/{cid}" if cid else "/")
        if cid is None:
            self._set_title("Ledger Chat")
        if self.right.value:
            self.audit.show(cid)
        self.refresh.chat_dirty = True
        self.refresh.flush()
        if cid is not None:
            background_tasks.create(self._fill_when_shown(cid), name="fill the transcript")

    async def _fill_when_shown(self, cid: str) -> None:
        """Once the browser shows the chat's first messages, add the rest of its window above them."""
        try:
            await self.client.connected(timeout=15)  # a page that never connects is released meanwhile
            await self.client.run_javascript(PAINTED, timeout=5)  # answered after the first messages arrived
        except TimeoutError:
            return
        if cid == self.cid and not self.client.is_deleted and self.engine.conversation(cid) is not None:
            with self.client:
                self.transcript.fill()

    # --- user actions ------------------------------------------------------------------------------------------

    async def submit(self, text: str, attachments: tuple[Attachment, ...] = ()) -> str | None:
        try:
            if self.cid is None:
                self.cid = await self.engine.start_conversation()
                self.audit.cid = self.cid
                self.sidebar.select(self.cid)
                ui.navigate.history.replace(f"/chat/{self.cid}")
                await self.engine.viewer_joined(self.cid, self.client.id)
            queue = self.engine.queued.add if self.engine.is_streaming(self.cid) else None  # sent after the answer
            if queue is not None and await queue(self.cid, text, self.model, attachments) is not None:
                return None
            await self.engine.send(self.cid, text, model=self.model, attachments=attachments, preset=self.preset)
        except InputRejected as exc:
            return str(exc)
        except StoreError as exc:
            return not_recorded(exc)
        return None

    async def stop(self) -> None:
        if self.cid is not None and self.shown_attempt is not None:
            await self.engine.cancel(self.cid, "user", attempt_id=self.shown_attempt)

    def open_audit(self, message_id: str) -> None:
        self.right.set_value(True)
        self.audit.show(self.cid, message_id)

    async def open_hit(self, hit: Hit, words: list[str]) -> None:
        """A search result: its chat, shown from the message that matched on, scrolled to it, its words marked."""
        await self.switch_to(hit.conversation_id)
        if hit.message_id is not None and hit.conversation_id == self.cid and not self.client.is_deleted:
            with self.client:
                self.transcript.open_at(hit.message_id, words)

    async def after_delete(self, cid: str) -> None:
        self.drafts.pop(cid, None)
        if cid == self.cid:
            await self.switch_to(None)
        else:
            self.sidebar.refresh()

    def _use_model(self, model: str) -> None:  # the meter and the file chips (the box's, open edits') follow it
        self.model = model
        for follower in (self.meter, self.composer, self.edits):
            follower.model_changed()

    def _preset_bar(self) -> None:  # in the header: the agent preset, the chat's cost, a link to the presets
        self.bar = PresetBar(self.engine, self.preset, self._use_preset, self.viewer)

    def _use_preset(self, preset: str) -> None:  # the model picker (and the meter) follow the preset
        self.preset = preset
        self._use_model(preset_model(self.engine, preset, self.viewer))
        if self.picker is not None:
            self.picker.value = self.model

    def _set_title(self, title: str) -> None:
        if title != self.title:
            self.title = title
            ui.page_title(title)
            self.heading.set_text(title.removesuffix(" · Ledger Chat") if title != "Ledger Chat" else "New chat")

    async def _on_route(self, e: GenericEventArguments) -> None:
        path = str(e.args or "/")
        cid = path.removeprefix("/chat/") if path.startswith("/chat/") else None
        await self.switch_to(cid, push=False)

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
        self.refresh.close()
        if self.cid is not None:
            await self.engine.viewer_left(self.cid, self.client.id, "disconnect")
