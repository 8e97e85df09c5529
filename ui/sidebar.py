"""The conversation list: New chat, a title filter, select, rename, delete (with confirmation), newest first.

Guarantees: the list shows at most ``shown`` conversations (``PAGE`` more on "Show more"), so a page costs the same with
ten chats or ten thousand; it is built from the engine's summaries (the store's index), never from conversations'
events; rebuilt only when what it shows changes (a conversation created, renamed, deleted, a stream started or ended,
the filter), never per chunk; a deleted chat's draft is forgotten by this browser too; choosing a chat asks the page to
switch in place (``open_chat``); every action goes through the engine; a conversation id reaches the page only as an
attribute value (never parsed as props or markup).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime

from nicegui import ui

from engine.commands import Engine, InputRejected
from engine.people import PERSONAL, Viewer
from ui.chat_list import ChatList, ChatRow
from ui.composer import forget_draft
from ui.export import archive_async
from ui.format import day_group, more_chats
from ui.notices import notice
from ui.search import OpenHit, SearchDialog

PAGE = 50  # conversations listed at first and added by each "Show more"


class Sidebar:
    def __init__(
        self,
        engine: Engine,
        current: str | None,
        open_chat: Callable[[str | None], Awaitable[None]],
        on_deleted: Callable[[str], Awaitable[None]],
        open_hit: OpenHit,
        viewer: Viewer = PERSONAL,
    ) -> None:
        self.engine, self.open_chat, self.on_deleted, self.viewer = engine, open_chat, on_deleted, viewer
        self.shown = PAGE
        self.query = ""
        self._signature: tuple[object, ...] = ()
        self._titles: dict[str, str] = {}  # the titles of the chats listed, as named (empty: never named)
        self.search = SearchDialog(engine, open_hit, viewer)
        with ui.column().classes("w-full gap-1 no-wrap lc-side-scroll") as self.root:
            with ui.column().classes("w-full gap-1 lc-sidebar-top"):
                ui.button("New chat", icon="add", on_click=lambda: self.open_chat(None)).props(
                    "unelevated no-caps data-lc-new-chat"
                ).classes("w-full").mark("new-chat")
                ui.button("Search chats", icon="search", on_click=self.search.open).props(
                    'outline no-caps data-lc-search aria-label="Search chats (Ctrl+K)"'
                ).classes("w-full").mark("search-chats")
                self.filter = (
                    ui.input(placeholder="Filter by title", on_change=lambda e: self._filter(e.value or ""))
                    .props('dense outlined clearable debounce=150 aria-label="Filter chats by title"')
                    .classes("w-full")
                    .mark("chat-filter")
                )
            self.list = ChatList(on_open=self.open_chat, on_rename=self._rename, on_delete=self._confirm_delete)
            self.list.classes("w-full").mark("conversation-list")
            self.list.select(current)
            self.more = (
                ui.button("Show more", icon="expand_more", on_click=self._more)
                .props("flat dense no-caps")
                .classes("w-full")
                .mark("more-chats")
            )
        # below the list, always in reach however long it is; the page adds the tool servers here
        with ui.column().classes("w-full gap-1 no-wrap lc-side-foot") as self.foot:
            ui.button("Download all chats", icon="archive", on_click=self._export_all).props(
                'flat dense no-caps aria-label="Download all chats (zip)"'
            ).classes("w-full").mark("export-all").tooltip("Every chat's ledger and Markdown, in one zip")
        self.refresh()

    @property
    def today(self) -> date:
        return datetime.now(UTC).date()

    def select(self, cid: str | None) -> None:
        """Mark ``cid`` as the chat shown (after an in-place switch or a new chat's first message)."""
        self.list.select(cid)

    def refresh(self) -> None:
        summaries = self.engine.summaries(self.query, self.viewer)
        visible = summaries[: self.shown]
        hidden = len(summaries) - len(visible)
        live = {s.conversation_id for s in visible if self.engine.is_streaming(s.conversation_id)}
        today = self.today
        self._titles = {s.conversation_id: s.title for s in visible}
        rows = [
            ChatRow(cid, s.title or "New conversation", day_group(s.when, today), cid in live)
            for s in visible
            for cid in (s.conversation_id,)
        ]
        signature: tuple[object, ...] = (self.query, hidden, tuple((r.conversation_id, r.title, r.group) for r in rows))
        if signature == self._signature:  # the same chats in the same places: only live markers may change
            self.list.set_live(live)
            return
        self._signature = signature
        self.more.set_text(more_chats(min(hidden, PAGE)))
        self.more.set_visibility(hidden > 0)
        self.list.show(rows, "No chat has that in its title." if self.query else "No conversations yet.")

    def _filter(self, query: str) -> None:
        self.query, self.shown = query.strip(), PAGE
        self.refresh()

    def _more(self) -> None:
        self.shown += PAGE
        self.refresh()

    async def _export_all(self) -> None:
        content = await archive_async(self.engine, self.viewer)  # every chat they own, read off the loop
        ui.download.content(content, "ledger-chat.zip", media_type="application/zip")

    def _rename(self, cid: str) -> None:
        title = self._titles.get(cid, "")
        with ui.dialog().props('aria-label="Rename conversation"') as dialog, ui.card().classes("min-w-[320px]"):
            ui.label("Rename conversation").classes("text-lg")
            name = ui.input("Name", value=title).props("autofocus").classes("w-full")

            def save() -> None:
                try:
                    self.engine.rename(cid, name.value or "")
                except InputRejected as exc:
                    notice(str(exc), "warning")
                    return
                dialog.close()

            name.on("keydown.enter", save)
            with ui.row().classes("justify-end w-full"):
                ui.button("Cancel", on_click=dialog.close).props("flat no-caps")
                ui.button("Save", on_click=save).props("no-caps")
        dialog.open()

    def _confirm_delete(self, cid: str) -> None:
        title = self._titles.get(cid) or "New conversation"
        with (
            ui.dialog().props('aria-label="Delete conversation"') as dialog,
            ui.card().classes("min-w-[320px]").mark("delete-dialog"),
        ):
            ui.label(f"Delete “{title}”?").classes("text-lg")
            ui.label("Its messages and its ledger are removed. A streaming answer is stopped first.").classes("lc-meta")

            async def delete() -> None:
                dialog.close()
                await self.engine.delete(cid)
                forget_draft(cid)
                notice("Conversation deleted")
                await self.on_deleted(cid)

            with ui.row().classes("justify-end w-full"):
                ui.button("Cancel", on_click=dialog.close).props("flat no-caps")
                ui.button("Delete", color="negative", on_click=delete).props("no-caps").mark("confirm-delete")
        dialog.open()
