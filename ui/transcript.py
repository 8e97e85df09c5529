"""The transcript: one view per message of the shown conversation, updated only where the state changed.

Guarantees: every message of the conversation has exactly one view, in order; a view is updated only when its
message, its selected attempt or its "last answer" role changed (a streaming answer touches only its own view);
``render`` returns the turn this page shows streaming (Stop cancels that turn only, never a newer one started
elsewhere); a deleted conversation is replaced by one line that says so.
"""

from __future__ import annotations

from nicegui import ui

from ledger.state import ConversationState
from ui.message_view import Actions, AssistantMessageView, UserMessageView

DEMO_HINT = (
    "Demo model: add #slow, #drop, #stall, #429, #500, #401, #malformed or #html to a message to watch Stop, "
    "Retry and the audit panel handle a fault."
)


class Transcript:
    def __init__(self, actions: Actions, *, demo: bool) -> None:
        self.actions = actions
        self.views: dict[str, UserMessageView | AssistantMessageView] = {}
        self.seen: dict[str, object] = {}
        self.empty = ui.column().classes("w-full items-center py-10 lc-meta")
        with self.empty:
            ui.label("Ask anything.").classes("text-xl")
            if demo:
                ui.label(DEMO_HINT).classes("text-center")
        self.messages = ui.column().classes("w-full gap-4").mark("messages")

    def render(self, conv: ConversationState | None) -> int | None:
        """Bring every view up to date with ``conv``; return the turn shown streaming, if any."""
        self.empty.set_visibility(conv is None or not conv.message_ids)
        if conv is None:
            return None
        live = conv.live_attempt()
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
        return conv.messages[live.message_id].turn if live is not None else None

    def show_gone(self) -> None:
        self.messages.clear()
        self.views.clear()
        with self.messages:
            ui.label("This conversation was deleted.").classes("lc-meta").mark("gone")
