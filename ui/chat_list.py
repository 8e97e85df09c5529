"""The rows of the conversation list as one light element: what a page costs does not grow with its row count.

Guarantees:
- The whole list is one element (``static/chat_list.js``) whose props are the rows as plain values (id, title,
  day group, streaming); the browser renders them as plain HTML: a real link per chat (``/chat/<id>``, so a
  middle click opens a new tab), a Rename and a Delete button with accessible names, a dot while it streams. Fifty
  rows cost ~5 KB of page and a handful of Python objects, not the ~350 Quasar components of a list of items.
- Titles and ids reach the browser only as text and attribute values (Vue escapes them), never as markup.
- An action from the browser is carried out only for a conversation the list shows (a forged event naming
  another id does nothing); a plain click on a link switches in place through ``on_open``.
- The element is updated only when what it shows changes (``show``, ``select``, ``set_live``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from nicegui import background_tasks, ui
from nicegui.events import GenericEventArguments

from ui.format import CHAT_LIST_WORDS


@dataclass(frozen=True, slots=True)
class ChatRow:
    conversation_id: str
    title: str
    group: str  # the day group ("Today", ...): a heading shows where it changes
    live: bool  # an answer is streaming


class ChatList(ui.element, component="static/chat_list.js"):
    def __init__(
        self,
        on_open: Callable[[str], Awaitable[None]],
        on_rename: Callable[[str], None],
        on_delete: Callable[[str], None],
    ) -> None:
        super().__init__()
        self._actions: dict[str, Callable[[str], Awaitable[None] | None]] = {
            "open": on_open,
            "rename": on_rename,
            "delete": on_delete,
        }
        self._rows: tuple[ChatRow, ...] = ()
        self._props["rows"] = []
        self._props["current"] = None
        self._props["empty"] = ""
        self._props["words"] = dict(CHAT_LIST_WORDS)
        self.on("act", self._on_act)

    @property
    def rows(self) -> tuple[ChatRow, ...]:
        """The rows shown, top to bottom."""
        return self._rows

    def show(self, rows: Sequence[ChatRow], empty: str) -> None:
        """Show ``rows`` (or the sentence ``empty`` when there are none)."""
        self._props["empty"] = empty
        self._send(rows)

    def select(self, cid: str | None) -> None:
        """Mark ``cid`` as the chat the page shows."""
        if self._props["current"] != cid:
            self._props["current"] = cid
            self.update()

    def set_live(self, live: set[str]) -> None:
        """Show the streaming dot on exactly the rows in ``live``."""
        if all(r.live == (r.conversation_id in live) for r in self._rows):
            return
        self._send([ChatRow(r.conversation_id, r.title, r.group, r.conversation_id in live) for r in self._rows])

    def act(self, action: str, cid: str) -> None:
        """What a click in the browser does: ``open``, ``rename`` or ``delete`` a chat the list shows."""
        handler = self._actions.get(action)
        if handler is None or all(r.conversation_id != cid for r in self._rows):
            return
        result = handler(cid)
        if asyncio.iscoroutine(result):
            background_tasks.create(result, name=f"chat list: {action}")

    def _send(self, rows: Sequence[ChatRow]) -> None:
        self._rows = tuple(rows)
        self._props["rows"] = [[r.conversation_id, r.title, r.group, r.live] for r in self._rows]
        self.update()

    def _on_act(self, e: GenericEventArguments) -> None:
        args = e.args
        if isinstance(args, list) and len(args) == 2 and all(isinstance(a, str) for a in args):
            self.act(args[0], args[1])
