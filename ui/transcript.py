"""The transcript: one view per message of the shown path of the conversation, updated only where it changed.

Guarantees: the messages shown are a tail of ``ledger.tree.selected_path`` (the chosen versions and selected
attempts), in order, one view each. A chat opens on its last ``WINDOW`` messages, so a page costs the same for a
20-turn and a 2,000-turn chat; "Show earlier messages" adds ``WINDOW`` more above without rebuilding what is shown;
messages sent meanwhile are added below. When the path changes (an edit, another version, a retry of an earlier
answer) the views from the first difference on are rebuilt; otherwise a view is updated only when its message,
its attempt or the streaming state changed. A streaming update costs the same in a 2-turn and a 2,000-turn chat:
the path is walked again only when the maps that decide it changed (``ui.shown_path``), and while neither it, the
versions nor the attempt running changed, only the views of the attempts still running are looked at (an ended
attempt never changes again but for counters no view shows). ``render`` returns the
attempt shown streaming (Stop cancels that attempt only); a branched chat links to where it came from; a deleted
conversation shows one line saying so. A chat is first painted with its last ``FIRST`` messages (its readable
text comes sooner); ``fill`` then grows that to ``WINDOW`` above them, once the page shows it. A user message
shows its files and edits them (``ui.user_message``); a compaction is a divider after the turn it reaches
(``ui.compaction_view``).
"""

from __future__ import annotations

from nicegui import ui

from ledger.state import TERMINAL_STATUSES, AttemptState, ConversationState
from ui.assistant_message import AssistantMessageView
from ui.compaction_view import CompactionView
from ui.format import FAR_BACK, earlier_messages
from ui.notices import notice
from ui.shown_path import ShownPath
from ui.surface import reveal
from ui.user_message import EditFiles, UserMessageView
from ui.widgets import Actions

WINDOW = 16  # messages shown when a chat opens, and added by each "Show earlier messages"
REACH = 8 * WINDOW  # messages shown at most when a search opens a chat at an earlier message
FIRST = 6  # of those, the messages the chat is first painted with (``fill`` adds the rest above)

DEMO_HINT = (
    "Demo model: add #slow, #drop, #stall, #429, #500, #401, #malformed or #html to a message to watch Stop, "
    "Retry and the audit panel handle a fault; ask for the time, or add #tools, to watch tool calls."
)


class Transcript:
    def __init__(self, actions: Actions, *, demo: bool, files: EditFiles | None = None) -> None:
        self.actions, self.files = actions, files
        self.views: dict[str, UserMessageView | AssistantMessageView | CompactionView] = {}
        self.seen: dict[str, object] = {}
        self.path: tuple[str, ...] = ()  # the messages shown: a tail of the selected path
        self.anchor: str | None = None  # the first message shown (None: the chat was not shown yet)
        self.start = 0  # its place in the selected path
        self.conv: ConversationState | None = None
        self.shown = ShownPath()
        self._walked: tuple[object, ...] | None = None  # what the last walk of the shown messages was made from
        self.watched: tuple[str, ...] = ()  # the shown messages whose attempt may still change
        self.origin = ui.row().classes("w-full items-center gap-1 lc-meta").mark("branched-from")
        self.origin.set_visibility(False)
        self.empty = ui.column().classes("w-full items-center py-10 lc-meta")
        with self.empty:
            ui.label("Ask anything.").classes("text-xl")
            if demo:
                ui.label(DEMO_HINT).classes("text-center")
        self.earlier = (
            ui.button("Show earlier messages", icon="expand_less", on_click=self.show_earlier)
            .props("flat dense no-caps")
            .classes("self-center")
            .mark("show-earlier")
        )
        self.earlier.set_visibility(False)
        self.messages = ui.column().classes("w-full gap-4").mark("messages")
        self.messages.props('role=log aria-live=off aria-label="Conversation"')

    def render(self, conv: ConversationState | None) -> str | None:
        """Bring every view up to date with ``conv``; return the attempt shown streaming, if any."""
        self.conv = conv
        if conv is None:
            self.empty.set_visibility(True)
            return None
        whole = self.shown.of(conv)  # walked only when the path can have changed (``ui.shown_path``)
        live = conv.live_attempt()
        running = live.attempt_id if live is not None else None
        self.empty.set_visibility(not whole)
        self._origin(conv)
        last = self._walked
        if last and last[0] is whole and last[1] is conv.children and last[2:] == (self.anchor, running):
            self.watched = self._update(conv, self.watched, live)  # a streaming update: the running views only
            return running
        start = self.shown.place(conv, self.anchor)
        # first render, or the path changed above (or at) the first message shown
        self.start = start if start is not None else max(0, len(whole) - (FIRST if self.anchor is None else WINDOW))
        self.anchor = whole[self.start] if whole else None  # the same, unless the path changed above it
        path = whole[self.start :]
        self._show_earlier_button()
        above = len(path) - len(self.path)  # messages added above the shown ones ("Show earlier messages")
        if not (self.path and above > 0 and path[above:] == self.path):
            above = 0
            if path != self.path:
                self._keep_common_prefix(path)
        self.path = path
        self.watched = self._update(conv, path, live)
        for index, message_id in enumerate(path[:above]):
            self.views[message_id].root.move(target_index=index)  # built below the shown ones: move them up
        self._walked = (whole, conv.children, self.anchor, running)
        return running

    def _update(self, conv: ConversationState, path: tuple[str, ...], live: AttemptState | None) -> tuple[str, ...]:
        """Update the views of ``path`` whose message, attempt shown, versions or the streaming state changed (made
        first if missing); return those whose attempt shown may still change (one that ended never changes again
        but for counters no view shows: ``ledger.updates``)."""
        running: list[str] = []
        for message_id in path:
            message = conv.messages[message_id]
            view = self.views.get(message_id)
            if view is None:
                with self.messages:
                    if message.role == "user":
                        view = UserMessageView(message, self.actions, self.files)
                    elif message.user_message_id is None:  # a compaction: a divider (ui.compaction_view)
                        view = CompactionView(message_id, self.actions)
                    else:
                        view = AssistantMessageView(message_id, self.actions)
                self.views[message_id] = view
            reply = conv.messages.get(message.reply_id or "")
            shown = conv.attempts.get((reply or message).selected_attempt_id or "")
            if shown is not None and shown.status not in TERMINAL_STATUSES:
                running.append(message_id)
            key = (message, shown, live is not None, conv.children.get(message.parent or "", ()))
            if self.seen.get(message_id) == key:
                continue
            self.seen[message_id] = key
            if isinstance(view, AssistantMessageView | CompactionView):
                view.update(conv)
            else:
                view.update(conv, shown.metrics if shown is not None else None, live is not None)
        return tuple(running)

    def _keep_common_prefix(self, path: tuple[str, ...]) -> None:
        """Keep the views the new path shares with the old one (an open editor, an expanded result survive a
        Send); rebuild from the first message that differs."""
        same = 0
        while same < min(len(path), len(self.path)) and path[same] == self.path[same]:
            same += 1
        for message_id in self.path[same:]:
            view = self.views.pop(message_id, None)
            self.seen.pop(message_id, None)
            if view is not None:
                view.root.delete()
        self.path = path

    def show_earlier(self) -> None:
        """Add up to ``WINDOW`` earlier messages above the shown ones; what is shown stays as it is."""
        self._grow_above(WINDOW)

    def show_from(self, message_id: str) -> bool:
        """Show the chat from the message before ``message_id`` on (a search found it), adding the messages between
        above the shown ones, at most ``REACH`` shown in all (a page stays bounded however long the chat); False when
        the message lies further back than that (or is not on the shown path)."""
        place = self.shown.place(self.conv, message_id) if self.conv is not None else None
        if place is None:
            return False
        at = max(0, place - 1)
        if at < self.start:
            self._grow_above(min(self.start - at, max(0, REACH - len(self.path))))
        return at >= self.start

    def open_at(self, message_id: str, words: list[str]) -> None:
        """A search result: shown from its message on (``show_from``), scrolled to it with ``words`` marked, or a
        notice saying how to reach a message further back than a page holds."""
        if self.show_from(message_id):
            reveal(message_id, words)
        else:
            notice(FAR_BACK, "info", multi_line=True)

    def fill(self) -> None:
        """Grow the messages a chat was first painted with to ``WINDOW``, above them (what is shown stays)."""
        if len(self.path) < WINDOW:
            self._grow_above(WINDOW - len(self.path))

    def _grow_above(self, count: int) -> None:
        """Show up to ``count`` more messages above the first one shown, without rebuilding what is shown."""
        if self.start and self.conv is not None:
            self.anchor = self.shown.of(self.conv)[max(0, self.start - count)]
            self.render(self.conv)

    def _show_earlier_button(self) -> None:
        hidden = self.start
        self.earlier.set_visibility(hidden > 0)
        if hidden:
            self.earlier.set_text(earlier_messages(min(hidden, WINDOW)))

    def reset(self) -> None:
        """Forget every view (another chat is about to be shown)."""
        self.messages.clear()
        self.views.clear()
        self.seen.clear()
        self.path = ()
        self.conv = None
        self.shown.forget()
        self._walked, self.watched = None, ()
        self.anchor, self.start = None, 0
        self.origin.clear()
        self.origin.set_visibility(False)

    def show_gone(self) -> None:
        """The conversation was deleted: one line says so; nothing of it is shown or added again (``fill``)."""
        self.reset()
        self.earlier.set_visibility(False)
        with self.messages:
            ui.label("This conversation was deleted.").classes("lc-meta").mark("gone")

    def _origin(self, conv: ConversationState) -> None:
        if conv.branched_from is None or self.origin.visible:
            return
        source = conv.branched_from[0]
        with self.origin:
            ui.icon("call_split", size="xs")
            ui.label("Branched from")
            ui.button("the original chat", on_click=lambda: self.actions.open_chat(source)).props(
                "flat dense no-caps size=sm"
            ).mark("branch-origin")
        self.origin.set_visibility(True)
