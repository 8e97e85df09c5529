"""Attempts of one answer told apart and side by side: which preset made each, and a compare view.

Guarantees:
- ``preset_label``: the name of the preset an attempt ran with (that version's name, as the preset was then), shown
  in the attempt's footer beside its model wherever it tells the answer's attempts apart: always for a preset that
  is not the default, and for the default one once another attempt of the answer ran with another preset. An
  attempt that ran with no preset (before presets existed) says nothing.
- ``compare_button``: on a finished answer with two attempts or more, "Compare" (accessible name "Compare attempts
  side by side") opens ``CompareView`` on the state as it is when pressed.
- ``CompareView``: two columns (one above the other on a narrow screen), each with a picker of the answer's attempts
  ("Attempt 2 · Critic · GPT-4o"), that attempt's preset, model, time, tokens and cost, and its text rendered as the
  answer shows it (a continued attempt with the text it continues). It opens on the attempt shown and the one before
  it (the first: and the second), in their order. Read from the conversation state when opened: a projection, nothing
  is written.
"""

from __future__ import annotations

from collections.abc import Callable

from nicegui import ui

from ledger.continuation import shown_text
from ledger.presets import DEFAULT_ID
from ledger.state import AttemptState, ConversationState
from ui.format import metrics_line, model_label
from ui.markdown import MarkdownStream
from ui.money import answer_cost

PresetName = Callable[[str, int], str | None]  # a preset's name at a version (None: unknown)


def preset_label(conv: ConversationState, attempt: AttemptState, name_of: PresetName) -> str:
    """The preset an attempt ran with, where it tells the answer's attempts apart ("" where it would not)."""
    if attempt.preset is None:
        return ""
    message = conv.messages.get(attempt.message_id)
    others = [conv.attempts[a].preset for a in message.attempt_ids if a in conv.attempts] if message else []
    if attempt.preset[0] == DEFAULT_ID and all(p is None or p[0] == DEFAULT_ID for p in others):
        return ""
    return preset_name(attempt, name_of)


def preset_name(attempt: AttemptState, name_of: PresetName) -> str:
    """The name of the preset version an attempt ran with (its id where the name cannot be read; "" for none)."""
    return (name_of(*attempt.preset) or attempt.preset[0]) if attempt.preset is not None else ""


def compare_button(conv: Callable[[], ConversationState | None], message_id: str, name_of: PresetName) -> None:
    """Compare, in the current row, on an answer with more than one attempt (``conv``: the state when pressed)."""
    now = conv()
    if now is None or len(now.messages[message_id].attempt_ids) < 2:
        return

    def open_view() -> None:
        if (state := conv()) is not None:
            with ui.context.client.layout:  # not in the action row: a rebuilt row would take the dialog with it
                CompareView(state, message_id, name_of)

    ui.button("Compare", icon="compare", on_click=open_view).props(
        'flat dense no-caps aria-label="Compare attempts side by side" title="Two attempts of this answer side by side"'
    ).mark("compare")


class CompareView:
    def __init__(self, conv: ConversationState, message_id: str, name_of: PresetName) -> None:
        self.conv, self.name_of = conv, name_of
        message = conv.messages[message_id]
        ids = list(message.attempt_ids)
        shown = message.selected_attempt_id or ids[-1]
        at = ids.index(shown)
        left, right = sorted((at, at - 1 if at > 0 else 1))  # the one shown and the one before it, in order
        with (
            ui.dialog().props('full-width aria-label="Compare attempts"') as self.dialog,
            ui.card().classes("w-full lc-compare").mark("compare-view"),
        ):
            with ui.row().classes("w-full items-center"):
                ui.label("Compare attempts").classes("text-lg font-medium")
                ui.space()
                ui.button(icon="close", on_click=self.dialog.close).props('flat round dense aria-label="Close"')
            with ui.element("div").classes("lc-compare-cols w-full"):
                for side, index in (("Left", left), ("Right", right)):
                    self._column(side, ids, ids[index])
        self.dialog.on("hide", self.dialog.delete)
        self.dialog.open()

    def _title(self, number: int, attempt: AttemptState) -> str:
        preset = preset_name(attempt, self.name_of)
        return " · ".join(p for p in (f"Attempt {number}", preset, model_label(attempt.model)) if p)

    def _column(self, side: str, ids: list[str], chosen: str) -> None:
        options = {aid: self._title(n, self.conv.attempts[aid]) for n, aid in enumerate(ids, start=1)}
        with ui.column().classes("gap-2 min-w-0").mark("compare-column"):
            picker = ui.select(options, value=chosen).props(f'dense outlined aria-label="{side}: attempt"')
            facts = ui.label("").classes("lc-meta").mark("compare-facts")
            text = MarkdownStream()

            def show(aid: str) -> None:
                attempt = self.conv.attempts[aid]
                status = "" if attempt.status == "complete" else attempt.status
                cost = answer_cost(self.conv, attempt)
                facts.set_text(" · ".join(p for p in (metrics_line(attempt.metrics), cost, status) if p))
                text.show(shown_text(self.conv, attempt), final=True)

            picker.on_value_change(lambda e: show(e.value))
            show(chosen)
