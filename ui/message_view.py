"""How one message looks: user bubbles, and assistant messages that stream, stop, fail and switch attempts.

Guarantees:
- An assistant message shows exactly its selected attempt (the ledger's projection): per step its rendered text
  (finished paragraphs frozen in their own elements and sent once; only the growing tail is re-sent), then a
  card per tool call of that step (``ui.tool_card``), in stream order.
- Its element carries ``data-status`` (streaming | complete | interrupted | failed | empty) and ``data-attempt``
  ("2/3"); states are visible: typing dots, a "Stopped" marker naming a cause that was not the user, a readable
  error marked "not in context", "Stopped before any text".
- Model output is rendered by ``MarkdownBlock`` (raw HTML shown as text); user text is shown as plain text.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from nicegui import ui

from ledger.events import TurnMetrics
from ledger.state import AttemptState, ConversationState, MessageState, ToolCallState
from ui.format import Clock, clock, error_title, metrics_line, stopped_text, user_line
from ui.markdown_stream import MarkdownStream
from ui.tool_card import ToolCard

DOM_STATUS = {
    "streaming": "streaming",
    "closing": "streaming",
    "complete": "complete",
    "interrupted": "interrupted",
    "failed": "failed",
    "empty": "empty",
}


class Actions:
    """What a message view may ask the page to do."""

    def __init__(
        self,
        retry: Callable[[str], Awaitable[None]],
        select: Callable[[str, str], None],
        audit: Callable[[str], None],
        decide: Callable[[str, bool], None],
    ) -> None:
        self.retry, self.select, self.audit, self.decide = retry, select, audit, decide


class StepView:
    """One step of an answer: its text, then the cards of the tool calls it made (in the order written)."""

    def __init__(self, decide: Callable[[str, bool], None]) -> None:
        self.decide = decide
        with ui.column().classes("w-full gap-1") as self.root:
            self.text = MarkdownStream()
            self.cards_box = ui.column().classes("w-full gap-1")
        self.cards: dict[str, ToolCard] = {}

    def update(self, text: str, calls: list[ToolCallState], attempt_live: bool) -> None:
        self.text.show(text)
        for call in calls:
            card = self.cards.get(call.call_id)
            if card is None:
                with self.cards_box:
                    card = self.cards[call.call_id] = ToolCard(call, self.decide)
            card.update(call, attempt_live)


class TimeLabel(ui.label):
    """A moment, shown in the browser's local time zone (the page's script rewrites the UTC fallback)."""

    def __init__(self, value: Clock | None = None, prefix: str = "") -> None:
        super().__init__("")
        self.prefix = prefix
        self.classes("lc-meta lc-time")
        self.show(value)

    def show(self, value: Clock | None) -> None:
        self.props["data-lc-time"] = value.iso if value else ""
        self.props["data-lc-prefix"] = self.prefix
        self.set_text(f"{self.prefix}{value.text}" if value else "")
        self.set_visibility(value is not None)


class UserMessageView:
    def __init__(self, message: MessageState) -> None:
        self.message_id = message.message_id
        with ui.column().classes("lc-user self-end items-end gap-0 max-w-[85%]").mark("user-message") as self.root:
            ui.label(message.text).classes("lc-bubble whitespace-pre-wrap break-words")
            with ui.row().classes("gap-1 items-baseline"):
                self.sent = TimeLabel(prefix="sent ")
                self.footer = ui.label("").classes("lc-meta")
        self._metrics: TurnMetrics | None = None
        self.update(message)

    def update(self, message: MessageState) -> None:
        if message.metrics != self._metrics:
            self._metrics = m = message.metrics
            self.sent.show(clock(m.sent_at) if m is not None and m.sent_at else None)
            self.footer.set_text(("· " if m is not None and m.sent_at else "") + user_line(m))


class AssistantMessageView:
    def __init__(self, message_id: str, actions: Actions) -> None:
        self.message_id = message_id
        self.actions = actions
        with ui.column().classes("lc-assistant w-full gap-1").mark("assistant-message") as self.root:
            with ui.row().classes("items-center gap-1 lc-meta") as self.switcher:
                self.prev = (
                    ui.button(icon="chevron_left", on_click=lambda: self._step(-1))
                    .props('flat dense round size=sm aria-label="Previous attempt"')
                    .mark("attempt-prev")
                )
                self.attempt_label = ui.label("").mark("attempt-label")
                self.next = (
                    ui.button(icon="chevron_right", on_click=lambda: self._step(1))
                    .props('flat dense round size=sm aria-label="Next attempt"')
                    .mark("attempt-next")
                )
            self.reasoning_box = ui.expansion("Reasoning", icon="psychology").classes("lc-reasoning w-full")
            with self.reasoning_box:
                self.reasoning = ui.label("").classes("whitespace-pre-wrap lc-meta")
            self.body = ui.column().classes("lc-body w-full gap-2")
            self.typing = ui.html(
                '<span class="lc-typing" aria-label="Answer streaming"><i></i><i></i><i></i></span>', sanitize=False
            )
            self.status_row = ui.row().classes("items-center gap-2 lc-meta")
            with ui.row().classes("gap-1 items-baseline"):
                self.footer = ui.label("").classes("lc-meta")
                self.completed = TimeLabel(prefix="· ")
        self.switcher.set_visibility(False)
        self.reasoning_box.set_visibility(False)
        self._attempt_id: str | None = None
        self._steps: list[StepView] = []
        self._reasoning = ""
        self._status_key: tuple[Any, ...] | None = None
        self._footer = ""
        self._conv: ConversationState | None = None

    def update(self, conv: ConversationState, *, is_last: bool) -> None:
        self._conv = conv
        message = conv.messages[self.message_id]
        attempt = conv.attempts[message.selected_attempt_id or message.attempt_ids[-1]]
        if attempt.attempt_id != self._attempt_id:
            self._reset(attempt.attempt_id)
        while len(self._steps) < max(len(attempt.steps), 1):
            with self.body:
                self._steps.append(StepView(self.actions.decide))
        for index, view in enumerate(self._steps):
            view.update(attempt.step_text(index), attempt.step_calls(index), attempt.is_live)
        if attempt.reasoning != self._reasoning:
            self._reasoning = attempt.reasoning
            self.reasoning.set_text(attempt.reasoning)
            self.reasoning_box.set_visibility(bool(attempt.reasoning))
        self._render_status(message, attempt, is_last)

    # --- parts -------------------------------------------------------------------------------------------------

    def _reset(self, attempt_id: str) -> None:
        self._attempt_id = attempt_id
        self._steps = []
        self.body.clear()

    def _render_status(self, message: MessageState, attempt: AttemptState, is_last: bool) -> None:
        total = len(message.attempt_ids)
        number = message.attempt_ids.index(attempt.attempt_id) + 1
        key = (attempt.status, attempt.cancel_source, attempt.error_summary, number, total, is_last, attempt.in_history)
        if key != self._status_key:
            self._status_key = key
            self.root.props["data-status"] = DOM_STATUS[attempt.status]
            self.root.props["data-attempt"] = f"{number}/{total}"
            self.typing.set_visibility(attempt.is_live)
            self.switcher.set_visibility(total > 1)
            self.attempt_label.set_text(f"{number}/{total}")
            self.prev.set_enabled(number > 1 and not attempt.is_live)
            self.next.set_enabled(number < total and not attempt.is_live)
            self._build_status_row(attempt, is_last)
        footer = metrics_line(attempt.metrics)
        if footer != self._footer:
            self._footer = footer
            self.footer.set_text(footer)
            m = attempt.metrics
            self.completed.show(clock(m.completed_at) if m is not None and m.completed_at else None)

    def _build_status_row(self, attempt: AttemptState, is_last: bool) -> None:
        self.status_row.clear()
        with self.status_row:
            if attempt.status == "closing":
                ui.label("Stopping…")
            elif attempt.status in ("interrupted", "empty"):
                ui.label(stopped_text(attempt)).classes("lc-chip lc-stopped").mark("stopped-marker")
            elif attempt.status == "failed":
                with ui.column().classes("gap-0 lc-error").mark("error"):
                    ui.label(error_title(attempt)).classes("font-medium")
                    ui.label(attempt.error_summary or "The answer failed.").classes("break-words")
                if attempt.text:
                    ui.label("not in context").classes("lc-chip").tooltip(
                        "This partial answer is shown but will not be sent to the model."
                    )
            if not attempt.is_live:
                if attempt.text:
                    ui.button(icon="content_copy", on_click=self._copy).props(
                        'flat dense round size=sm aria-label="Copy"'
                    ).tooltip("Copy the answer")
                ui.button(icon="timeline", on_click=lambda: self.actions.audit(self.message_id)).props(
                    'flat dense round size=sm aria-label="Audit"'
                ).tooltip("Show this answer in the audit panel")
                if is_last:
                    again = "Ask again: a new attempt" + (", tools run again" if attempt.tool_calls else "")
                    ui.button("Retry", icon="refresh", on_click=lambda: self.actions.retry(self.message_id)).props(
                        "flat dense no-caps"
                    ).mark("retry").tooltip(again)

    def _copy(self) -> None:
        conv = self._conv
        if conv is None or self._attempt_id is None:
            return
        ui.clipboard.write(conv.attempts[self._attempt_id].text)
        ui.notify("Copied", type="positive", timeout=1000)

    def _step(self, delta: int) -> None:
        conv = self._conv
        if conv is None:
            return
        message = conv.messages[self.message_id]
        index = message.attempt_ids.index(self._attempt_id or message.attempt_ids[-1]) + delta
        if 0 <= index < len(message.attempt_ids):
            self.actions.select(self.message_id, message.attempt_ids[index])
