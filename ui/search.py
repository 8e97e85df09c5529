"""Search across chats: a dialog (Ctrl/Cmd+K, or the Search button) over titles and message text.

Guarantees: results update as you type, each with the chat's title and a snippet of the matching line as plain
words with the query's words marked (``ui.search_snippet``); Enter opens the first result (pressed before any
came, the first once the chats not loaded were read), a click opens any, at
the message that matched, scrolled into view with its words marked, however far back it lies (``open_hit``);
Esc closes; the button and the input have accessible names.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from nicegui import ui

from engine.commands import Engine
from engine.people import PERSONAL, Viewer
from ledger.search import Hit
from ui.search_snippet import snippet_html

OpenHit = Callable[[Hit, list[str]], Awaitable[None]]  # open the hit's chat at its message, marking these words


class SearchDialog:
    def __init__(self, engine: Engine, open_hit: OpenHit, viewer: Viewer = PERSONAL) -> None:
        self.engine, self.open_hit, self.viewer = engine, open_hit, viewer  # only the chats ``viewer`` sees
        self.hits: list[Hit] = []
        self._asked = 0  # the newest query's number: an older search that ends later is not shown
        self._enter = -1  # the query Enter was pressed for before it had a result (``_open_first``)
        with (
            ui.dialog().props('aria-label="Chat search"') as self.dialog,
            ui.card().classes("w-full max-w-xl").mark("search-dialog"),
        ):
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
        self._render(query, self.engine.search(query, viewer=self.viewer))
        if not query.strip():
            return
        hits = await self.engine.search_async(query, still_wanted=lambda: self._asked == asked, viewer=self.viewer)
        if self._asked == asked:
            self._render(query, hits)
            if self._enter == asked and hits:  # Enter was pressed before these results came: it opens the first
                await self._go(hits[0])

    def _render(self, query: str, hits: list[Hit]) -> None:
        self.hits = hits
        words = query.split()
        self.results.clear()
        with self.results:
            if query.strip() and not self.hits:
                ui.label("Nothing found.").classes("lc-meta")
            for hit in self.hits:
                with (
                    ui.button(on_click=lambda hit=hit: self._go(hit))
                    .props("flat no-caps align=left")
                    .classes("w-full")
                    .mark("search-hit"),
                    ui.column().classes("gap-0 items-start w-full"),
                ):
                    ui.label(hit.title).classes("font-medium text-left")
                    if hit.line != hit.title:  # escaped words and our own marks only: no markup of the line's
                        ui.html(snippet_html(hit.line, words), sanitize=False).classes(
                            "lc-meta text-left break-words"
                        ).mark("search-snippet")

    async def _open_first(self) -> None:
        if self.hits:
            await self._go(self.hits[0])
        else:  # the search of the chats not loaded is still reading: Enter opens its first result when it comes
            self._enter = self._asked

    async def _go(self, hit: Hit) -> None:
        self.dialog.close()
        await self.open_hit(hit, (self.box.value or "").split())
