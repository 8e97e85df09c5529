"""The surface on every screen size: the parts of the page that make it work on a phone and with a keyboard.

Guarantees:
- ``add_surface`` serves ``static/surface.css`` and ``static/surface.js`` (the app's own files, versioned like the
  rest) and adds the skip links to the latest answer and to the chat list.
- The chats drawer closes after a switch (New chat, a chat, a search result, a branch) where it lies over the chat
  (a narrow screen); on a wide screen it stays (``close_chats_on_phone``).
- The audit panel has a close button named "Close audit panel" (``audit_close_button``); from 800 px it takes its
  room beside the chat, and below ``CHAT_ROOM`` opening it closes the chat list (opened again when the panel
  closes, if it was open): the chat keeps its width and nothing covers the user's messages
  (``audit_takes_the_lists_place``); on a phone it is a full-screen sheet, and Esc closes it there.
- Tooltips never show on a touch screen (no hover there: a tap would leave them standing over the page).
- ``reveal`` scrolls the chat shown to the message a search found, marks its words, and keeps it in view.
"""

from __future__ import annotations

import json

from nicegui import ui
from nicegui.events import ValueChangeEventArguments

from ui.style import ROUTE, static_version

SKIP_LINKS = """
<a class="lc-skip" href="#" data-lc-skip="latest">Skip to the latest answer</a>
<a class="lc-skip" href="#" data-lc-skip="chats">Skip to the chat list</a>
"""


CHAT_ROOM = 1428  # px: the chat list (280), the chat column (768) and the audit panel (380) side by side


def audit_takes_the_lists_place(chats: ui.left_drawer, audit: ui.right_drawer) -> None:
    """Below ``CHAT_ROOM`` (above a phone's 800 px), the audit panel opening closes the chat list, and closing
    it opens the list again if the panel closed it. Decided in the browser, which knows its width and the list's
    state without a round trip (a round trip can time out on a busy machine and leave the two out of step)."""

    def toggled(e: ValueChangeEventArguments[bool | None]) -> None:
        ui.run_javascript(
            f"window.lcSurface && window.lcSurface.auditToggled({json.dumps(bool(e.value))}, {chats.id}, {CHAT_ROOM})"
        )

    audit.on_value_change(toggled)


def add_surface() -> None:
    version = static_version()
    ui.add_head_html(f'<link rel="stylesheet" href="{ROUTE}/surface.css?v={version}">')
    ui.add_head_html(f'<script src="{ROUTE}/surface.js?v={version}" defer></script>')
    ui.add_body_html(SKIP_LINKS)


def close_chats_on_phone(drawer: ui.left_drawer) -> None:
    """Close the chats drawer if it lies over the chat (below its breakpoint); a wide screen keeps it."""
    ui.run_javascript(f"window.lcSurface && window.lcSurface.closeOnPhone({drawer.id})")


def audit_close_button(drawer: ui.right_drawer) -> None:
    with ui.row().classes("w-full lc-audit-top"):
        ui.button(icon="close", on_click=lambda: drawer.set_value(False)).props(
            'flat round dense data-lc-audit-close aria-label="Close audit panel"'
        ).mark("audit-close")


def reveal(message_id: str, words: list[str]) -> None:
    """Bring the message ``message_id`` into view once it is on the page, its ``words`` marked, and stop following
    the latest answer (the chat opened from a search: it stays at the match until the reader scrolls)."""
    ui.run_javascript(f"window.lcSurface && window.lcSurface.reveal({json.dumps(message_id)}, {json.dumps(words)})")
