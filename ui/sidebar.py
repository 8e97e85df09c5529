"""The conversation list: New chat, select, rename, delete (with confirmation), newest first, live markers.

Guarantees: rebuilt only when the list changes (a conversation created, renamed, deleted, or a stream started or
ended), never per chunk; every action goes through the engine; a conversation id reaches the page only as an
attribute value (never parsed as props or markup).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime

from nicegui import ui

from engine.engine import Engine, InputRejected
from ui.export import archive
from ui.format import day_group
from ui.notices import notice
from ui.search import SearchDialog


class Sidebar:
    def __init__(
        self,
        engine: Engine,
        current: str | None,
        navigate: Callable[[str], None],
        on_deleted: Callable[[str], Awaitable[None]],
    ) -> None:
        self.engine, self.current, self.navigate, self.on_deleted = engine, current, navigate, on_deleted
        self._signature: tuple[object, ...] = ()
        self.search = SearchDialog(engine, lambda cid: self.navigate(f"/chat/{cid}"))
        with ui.column().classes("w-full gap-1") as self.root:
            with ui.column().classes("w-full gap-1 lc-sidebar-top"):
                ui.button("New chat", icon="add", on_click=lambda: self.navigate("/")).props(
                    "unelevated no-caps"
                ).classes("w-full").mark("new-chat")
                ui.button("Search chats", icon="search", on_click=self.search.open).props(
                    'outline no-caps data-lc-search aria-label="Search chats (Ctrl+K)"'
                ).classes("w-full").mark("search-chats")
            self.list = ui.list().props("dense separator").classes("w-full").mark("conversation-list")
            ui.button("Download all chats", icon="archive", on_click=self._export_all).props(
                'flat dense no-caps aria-label="Download all chats (zip)"'
            ).classes("w-full").mark("export-all").tooltip("Every chat's ledger and Markdown, in one zip")
        self.refresh()

    @property
    def today(self) -> date:
        return datetime.now(UTC).date()

    def refresh(self) -> None:
        convs = self.engine.conversations()
        signature: tuple[object, ...] = (
            self.current,
            *((c.conversation_id, c.title, c.live_attempt() is not None) for c in convs),
        )
        if signature == self._signature:
            return
        self._signature = signature
        self.list.clear()
        with self.list:
            if not convs:
                with ui.item():
                    ui.item_label("No conversations yet.").classes("lc-meta")
            group = ""
            for conv in convs:
                cid = conv.conversation_id
                when = day_group(conv.updated_ts or conv.created_ts, self.today)
                if when != group:
                    group = when
                    with ui.item().classes("lc-group-item").props("dense"):
                        ui.item_label(when).classes("lc-group")
                active = "lc-current" if cid == self.current else ""
                item = ui.item(on_click=lambda cid=cid: self.navigate(f"/chat/{cid}"))
                item.props["data-conversation"] = cid  # set as a value, never parsed as markup
                with item.classes(active).mark(f"conversation-{cid}"):
                    with ui.item_section():
                        title = conv.title or "New conversation"
                        ui.item_label(title).classes("lc-title").props["title"] = title
                    with ui.item_section().props("side"), ui.row().classes("items-center gap-0 no-wrap"):
                        if conv.live_attempt() is not None:
                            ui.icon("fiber_manual_record", color="green", size="xs").tooltip("Streaming").mark(
                                "live-marker"
                            )
                        ui.button(icon="edit", on_click=lambda cid=cid: self._rename(cid)).props(
                            'flat dense round size=sm aria-label="Rename"'
                        ).on("click.stop", lambda: None).mark("rename").tooltip("Rename")
                        ui.button(icon="delete_outline", on_click=lambda cid=cid: self._confirm_delete(cid)).props(
                            'flat dense round size=sm aria-label="Delete"'
                        ).on("click.stop", lambda: None).mark("delete").tooltip("Delete")

    def _export_all(self) -> None:
        ui.download.content(archive(self.engine), "ledger-chat.zip", media_type="application/zip")

    def _rename(self, cid: str) -> None:
        conv = self.engine.conversation(cid)
        if conv is None:
            return
        with ui.dialog() as dialog, ui.card().classes("min-w-[320px]"):
            ui.label("Rename conversation").classes("text-lg")
            name = ui.input("Name", value=conv.title).props("autofocus").classes("w-full")

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
        conv = self.engine.conversation(cid)
        if conv is None:
            return
        with ui.dialog() as dialog, ui.card().classes("min-w-[320px]").mark("delete-dialog"):
            ui.label(f"Delete “{conv.title or 'New conversation'}”?").classes("text-lg")
            ui.label("Its messages and its ledger are removed. A streaming answer is stopped first.").classes("lc-meta")

            async def delete() -> None:
                dialog.close()
                await self.engine.delete(cid)
                notice("Conversation deleted")
                await self.on_deleted(cid)

            with ui.row().classes("justify-end w-full"):
                ui.button("Cancel", on_click=dialog.close).props("flat no-caps")
                ui.button("Delete", color="negative", on_click=delete).props("no-caps").mark("confirm-delete")
        dialog.open()
