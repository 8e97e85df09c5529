"""Search across chats: a dialog (Ctrl/Cmd+K, or the Search button) over titles and message text.

Guarantees: results update as you type (each with the chat's title and the matching line, as text); Enter opens
the first result, a click opens any, at the first message that matches (marked); Esc closes; the button and the
input have accessible names.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from nicegui import ui

from engine.commands import Engine
from ledger.search import Hit
from ui.surface import reveal


class SearchDialog:
    def __init__(self, engine: Engine, open_chat: Callable[[str], Awaitable[None]]) -> None:
        self.engine, self.open_chat = engine, open_chat
        self.hits: list[Hit] = []
        self._asked = 0  # the newest query's number: an older search that ends later is not shown
        with ui.dialog() as self.dialog, ui.card().classes("w-full max-w-xl").mark("search-dialog"):
            self.box = (
                ui.input(placeholder="Search titles and messages", on_change=lambda e: self.show(e.value or ""))
                .props('autofocus outlined dense clearable aria-label="Search chats"')
                .classes("w-full")
                .mark("search-input")
            )
            self.box.on("keydown.enter", self._open_first)
            self.results = ui.column().classes("w-full gap-1").mark("search-results")

    def open(self) -> None:
        self.box.value = ""
        self._asked += 1
        self._render("", [])
        self.dialog.open()

    async def show(self, query: str) -> None:
        """Titles and loaded chats at once, then the messages of every chat (read off the event loop)."""
        self._asked += 1
        asked = self._asked
        self._render(query, self.engine.search(query))
        if not query.strip():
            return
        hits = await self.engine.search_async(query, still_wanted=lambda: self._asked == asked)
        if self._asked == asked:
            self._render(query, hits)

    def _render(self, query: str, hits: list[Hit]) -> None:
        self.hits = hits
        self.results.clear()
        with self.results:
            if query.strip() and not self.hits:
                ui.label("Nothing found.").classes("lc-meta")
            for hit in self.hits:
                with (
                    ui.button(on_click=lambda cid=hit.conversation_id: self._go(cid))
                    .props("flat no-caps align=left")
                    .classes("w-full")
                    .mark("search-hit"),
                    ui.column().classes("gap-0 items-start w-full"),
                ):
                    ui.label(hit.title).classes("font-medium text-left")
                    if hit.line != hit.title:
                        ui.label(hit.line).classes("lc-meta text-left break-words")

    async def _open_first(self) -> None:
        if self.hits:
            await self._go(self.hits[0].conversation_id)

    async def _go(self, cid: str) -> None:
        self.dialog.close()
        await self.open_chat(cid)
        reveal(self.dialog.client, self.box.value or "")  # the chat opens at the match, marked
