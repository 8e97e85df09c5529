"""An assistant message: its selected attempt streaming, stopping, failing, with its tool calls, and its actions.

Guarantees:
- It shows exactly its selected attempt (the ledger's projection): per step its text (``ui.markdown.stream``:
  only what was added is sent; finished blocks rendered; the tail rendered when the attempt ends), then a card
  per tool call of that step (``ui.tool_card``), in stream order; its reasoning streams the same way, as plain
  text.
- Its element carries ``data-status`` (streaming | complete | interrupted | failed | empty) and ``data-attempt``
  ("2/3"), set in the page after the text they are about (a page that reads "complete" holds the whole text), and
  ``data-last-activity`` (sent at most every ``ACTIVITY_SECONDS`` and only for activity that shows no text: the text
  element refreshes it in the browser on every addition); states are visible: typing dots, a "Stopped" marker naming a
  cause that was not the user, a readable error marked "not in context", "Stopped before any text", why an automatic
  re-send is waiting, and ``FILTERED`` on an answer the provider's content filter ended (``content_filter``).
- Every finished answer has Copy, Audit, Branch and Retry (retrying an earlier answer starts a new branch there;
  later turns stay with the old attempt); a chat branched from it is linked; a cut-short latest answer has
  Continue, and a continued one shows the answer it continues above its own text (``ui.continued_view``).
- Model output is rendered by ``ui.markdown.safe`` (raw HTML shown as text).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from nicegui import ui

from ledger.continuation import continuable, joined, shown_text
from ledger.state import AttemptState, ConversationState, MessageState, ToolCallState
from ui.answer_status import DOM_STATUS, mark
from ui.approval_card import Decide
from ui.compare_view import compare_button, preset_label
from ui.continued_view import carried, continue_button, join_marker, prefix_steps, reopened
from ui.format import clock, error_title, metrics_line, model_label, stopped_text
from ui.markdown import MarkdownStream
from ui.money import answer_cost
from ui.notices import notice
from ui.preset_picker import retry_with_preset
from ui.question_form import AnswerFn
from ui.tool_card import ToolCard
from ui.tool_descriptions import Describe
from ui.widgets import Actions, Switcher, TimeLabel

FILTERED = "Ended by the provider's content filter"
LENGTH_CUT = "Cut at the length limit"
ACTIVITY_SECONDS = 1.0  # the "waiting for the provider" hint shows after 4 s of silence


class StepView:
    """One step of an answer: its text, then the cards of the tool calls it made (in the order written)."""

    def __init__(self, decide: Decide, answer: AnswerFn | None = None, describe: Describe | None = None) -> None:
        self.decide, self.answer, self.describe = decide, answer, describe
        with ui.column().classes("w-full gap-1") as self.root:
            self.text = MarkdownStream()
            self.cards_box = ui.column().classes("w-full gap-1")
        self.cards: dict[str, ToolCard] = {}

    def update(self, text: str, calls: list[ToolCallState], attempt_live: bool, cut: bool = False) -> None:
        self.text.show(text, final=not attempt_live, cut=cut)
        for call in calls:
            card = self.cards.get(call.call_id)
            if card is None:
                with self.cards_box:
                    card = self.cards[call.call_id] = ToolCard(call, self.decide, self.answer, self.describe)
            card.update(call, attempt_live)


class AssistantMessageView:
    def __init__(self, message_id: str, actions: Actions) -> None:
        self.message_id = message_id
        self.actions = actions
        with ui.column().classes("lc-assistant w-full gap-1").mark("assistant-message") as self.root:
            self.root.props["data-lc-message"] = message_id  # a search opens the chat at it
            self.body = ui.column().classes("lc-body w-full gap-2")
            self.typing = ui.html(
                '<span class="lc-typing" role="img" aria-label="Answer streaming"><i></i><i></i><i></i></span>'
                ' <span class="lc-waiting"></span>',
                sanitize=False,
            )
            self.status_row = ui.row().classes("items-center gap-2 lc-meta")
            with ui.row().classes("gap-1 items-baseline"):
                self.footer = ui.label("").classes("lc-meta")
                self.completed = TimeLabel(prefix="· ")
        self.switcher: Switcher | None = None  # made when there is a second attempt (fewer bytes per answer)
        self.reasoning_box: ui.expansion | None = None  # made when there is reasoning to show
        self.reasoning: MarkdownStream | None = None
        self._attempt_id: str | None = None
        self._steps: list[StepView] = []
        self._above: list[StepView] = []  # the answer a continuation continues (``_show_prefix``)
        self._activity_at = 0.0
        self._text_len = 0
        self._status_key: tuple[Any, ...] | None = None
        self._switcher_key: tuple[int, int, bool] | None = None
        self._footer = ""
        self._conv: ConversationState | None = None
        self._prefix = ""  # a continuation: the last text of the answer it continues (``ui.continued_view``)
        self._carried = ""  # and the paragraph of it shown with the continuation (a stop inside bold)

    def update(self, conv: ConversationState) -> None:
        self._conv = conv
        message = conv.messages[self.message_id]
        attempt = conv.attempts[message.selected_attempt_id or message.attempt_ids[-1]]
        if attempt.attempt_id != self._attempt_id:
            self._reset(attempt.attempt_id)
            self._show_prefix(conv, attempt)
        while len(self._steps) < max(len(attempt.steps), 1):
            with self.body:
                self._steps.append(StepView(self.actions.decide, self.actions.answer, self.actions.describe))
        last = len(self._steps) - 1  # an answer cut short (Stop, error) shows its last text closed, as it streamed
        for index, view in enumerate(self._steps):
            cut = index == last and attempt.status in ("interrupted", "failed")
            text = attempt.step_text(index) if index else self._first(attempt.step_text(0))
            view.update(text, attempt.step_calls(index), attempt.is_live, cut)
        grew = self._show_reasoning(attempt.reasoning, attempt.is_live) | (len(attempt.text) != self._text_len)
        self._text_len = len(attempt.text)
        now = time.monotonic()
        if attempt.is_live and not grew and now - self._activity_at >= ACTIVITY_SECONDS:
            # text that grew refreshes it in the browser (the stream element): only silent activity is sent
            self._activity_at = now
            self.root.props["data-last-activity"] = datetime.now(UTC).isoformat(timespec="milliseconds")
        self._render_status(message, attempt)

    # --- parts -------------------------------------------------------------------------------------------------

    def _show_reasoning(self, reasoning: str, live: bool) -> bool:
        """Show the attempt's reasoning (the box is made the first time there is any); whether it grew."""
        if self.reasoning is None or self.reasoning_box is None:
            if not reasoning:
                return False
            with self.root:
                self.reasoning_box = ui.expansion("Reasoning", icon="psychology").classes("lc-reasoning w-full")
                with self.reasoning_box:
                    self.reasoning = MarkdownStream(plain=True)
            self.reasoning_box.move(target_index=1 if self.switcher is not None else 0)
        grew = len(reasoning) != len(self.reasoning.markdown)
        self.reasoning.show(reasoning, final=not live)
        if self.reasoning_box.visible != bool(reasoning):
            self.reasoning_box.set_visibility(bool(reasoning))
        return grew

    def _reset(self, attempt_id: str) -> None:
        self._attempt_id = attempt_id
        self._steps, self._above = [], []
        self.body.clear()

    def _show_prefix(self, conv: ConversationState, attempt: AttemptState) -> None:
        """A continuation (``ui.continued_view``): the answer it continues above its own steps, the join marked."""
        before = prefix_steps(conv, attempt)
        self._prefix = before[-1][0] if before else ""
        self._carried, shown = "", list(before)
        if before and not before[-1][1]:  # the prefix ends with text: a paragraph the stop cut goes on below
            above, self._carried = carried(self._prefix)
            shown[-1:] = [(above, [])] if above else []
        with self.body:
            for text, calls in shown:
                self._above.append(StepView(self.actions.decide, self.actions.answer, self.actions.describe))
                self._above[-1].update(text, calls, False)
            if before:
                join_marker(within=bool(self._carried))

    def _first(self, text: str) -> str:
        """The continuation's first text as shown: inside a code block the prefix left open, or with the paragraph
        the stop cut (``ui.continued_view``)."""
        return joined(self._carried, text) if self._carried else reopened(self._prefix, text)

    def _render_status(self, message: MessageState, attempt: AttemptState) -> None:
        total = len(message.attempt_ids)
        number = message.attempt_ids.index(attempt.attempt_id) + 1
        live = self._conv is not None and self._conv.live_attempt() is not None
        if (number, total, live) != self._switcher_key:  # an answer streaming in this chat locks it
            self._switcher_key = (number, total, live)
            if self.switcher is None and total > 1:
                with self.root:
                    self.switcher = Switcher("attempt", "attempt", self._step)
                self.switcher.root.move(target_index=0)
            if self.switcher is not None:
                self.switcher.show(number, total, locked=live)
        note = attempt.resend_note
        can_continue = not attempt.is_live and self._conv is not None and continuable(self._conv, self.message_id)
        shown = (attempt.status, attempt.cancel_source, attempt.error_summary, note, number, total, message.branches)
        key = (*shown, can_continue)
        if key != self._status_key:
            self._status_key = key
            self._mark(DOM_STATUS[attempt.status], f"{number}/{total}")
            self.typing.set_visibility(attempt.is_live)
            self._build_status_row(message, attempt)
        cost = answer_cost(self._conv, attempt) if self._conv is not None else ""  # ui.money: ~ when estimated
        preset = preset_label(self._conv, attempt, self.actions.preset_name) if self._conv is not None else ""
        footer = " · ".join(p for p in (preset, model_label(attempt.model), metrics_line(attempt.metrics), cost) if p)
        if footer != self._footer:
            self._footer = footer
            self.footer.set_text(footer)
            m = attempt.metrics
            self.completed.show(clock(m.completed_at) if m is not None and m.completed_at else None)

    def _mark(self, status: str, attempt: str) -> None:
        """``data-status`` / ``data-attempt``, set in the page after every text of this answer (``ui.answer_status``):
        its steps, the answer it continues, its reasoning."""
        streams = [view.text for view in (*self._above, *self._steps)] + ([self.reasoning] if self.reasoning else [])
        mark(self.root, streams, status, attempt)

    def _build_status_row(self, message: MessageState, attempt: AttemptState) -> None:
        self.status_row.clear()
        with self.status_row:
            if attempt.status == "closing":
                ui.label("Stopping…")
            elif attempt.resend_note:  # an automatic re-send waits (as long as the provider asked)
                ui.label(f"Re-sending. {attempt.resend_note}").classes("lc-chip").mark("resend-marker")
            elif attempt.status in ("interrupted", "empty"):
                ui.label(stopped_text(attempt)).classes("lc-chip lc-stopped").mark("stopped-marker")
            elif attempt.finish_reason == "length":  # the output limit: Continue goes on (``ui.continued_view``)
                ui.label(LENGTH_CUT).classes("lc-chip lc-stopped").mark("length-marker")
            elif attempt.finish_reason == "content_filter":  # Gemini's SAFETY, Anthropic's refusal, OpenAI's filter
                ui.label(FILTERED).classes("lc-chip lc-stopped").mark("filtered-marker")
            elif attempt.status == "failed":
                with ui.column().classes("gap-0 lc-error").mark("error"):
                    ui.label(error_title(attempt)).classes("font-medium")
                    ui.label(attempt.error_summary or "The answer failed.").classes("break-words")
                if attempt.text:
                    ui.label("not in context").classes("lc-chip").props(
                        'title="This partial answer is shown but will not be sent to the model."'
                    )
                if attempt.error_type == "context_length" and (compact := self.actions.compact_retry) is not None:
                    ui.button("Compact and retry", icon="compress", on_click=lambda: compact(self.message_id)).props(
                        'flat dense no-caps title="Summarize the earlier turns, then ask again"'
                    ).mark("compact-retry")
            if not attempt.is_live:  # native tooltips (``title``): a Quasar one is an element per button per message
                if attempt.text:
                    ui.button(icon="content_copy", on_click=self._copy).props(
                        'flat dense round size=sm aria-label="Copy" title="Copy the answer"'
                    )
                ui.button(icon="timeline", on_click=lambda: self.actions.audit(self.message_id)).props(
                    'flat dense round size=sm aria-label="Audit" title="Show this answer in the audit panel"'
                )
                ui.button(icon="call_split", on_click=lambda: self.actions.branch(self.message_id)).props(
                    'flat dense round size=sm aria-label="Branch" '
                    'title="Branch from here: a new chat with the conversation up to this answer"'
                ).mark("branch")
                again = "Ask again: a new attempt" + (", tools run again" if attempt.tool_calls else "")
                retry = ui.button("Retry", icon="refresh", on_click=lambda: self.actions.retry(self.message_id, None))
                retry.props("flat dense no-caps").mark("retry").props["title"] = again
                if len(self.actions.models) > 1:
                    with (
                        ui.button(icon="expand_more")
                        .props('flat dense round size=sm aria-label="Retry with another model"')
                        .mark("retry-with"),
                        ui.menu(),
                    ):
                        for model in self.actions.models:
                            ui.menu_item(
                                f"Retry with {model_label(model)}",
                                on_click=lambda model=model: self.actions.retry(self.message_id, model),
                            )
                retry_with_preset(self.actions, self.message_id, attempt.preset[0] if attempt.preset else None)
                if self._conv is not None:
                    continue_button(self._conv, self.message_id, self.actions.continue_answer)
                    compare_button(lambda: self._conv, self.message_id, self.actions.preset_name)
            for new_cid in message.branches:
                ui.button("Branched into a new chat", icon="call_split").props("flat dense no-caps size=sm").on_click(
                    lambda cid=new_cid: self.actions.open_chat(cid)
                ).mark("branch-link")

    def _copy(self) -> None:
        conv = self._conv
        if conv is None or self._attempt_id is None:
            return
        ui.clipboard.write(shown_text(conv, conv.attempts[self._attempt_id]))  # a continued answer: all of it
        notice("Copied", "positive")

    def _step(self, delta: int) -> None:
        conv = self._conv
        if conv is None:
            return
        message = conv.messages[self.message_id]
        index = message.attempt_ids.index(self._attempt_id or message.attempt_ids[-1]) + delta
        if 0 <= index < len(message.attempt_ids):
            self.actions.select(self.message_id, message.attempt_ids[index])
