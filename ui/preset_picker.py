"""Choosing the agent preset of a chat's next answer, Retry with another preset, and the chat's cost in the header.

Guarantees:
- A chat shows the preset its last answer ran with (if it still exists), else the default; choosing another one
  changes only what the next answer (Send, Retry, Edit) runs with, and the model picker follows the preset's model.
- "Retry with another preset" offers every other preset for one answer: a new attempt of the same message, so
  the attempts can be compared (‹ n/m ›) as with Retry with another model.
- The header shows what the chat cost so far (``ui.money``) and links to the presets page (``/presets``).
Every control has an accessible name.
"""

from __future__ import annotations

from collections.abc import Callable

from nicegui import ui
from nicegui.events import ValueChangeEventArguments

from engine.commands import Engine
from engine.people import Viewer
from ledger.presets import DEFAULT_ID
from ledger.state import ConversationState
from ui.money import chat_words, title_of
from ui.shown_path import ChatCost
from ui.widgets import Actions


class PresetBar:
    """Built inside the header: the preset picker, the chat's cost, the link to the presets page."""

    def __init__(self, engine: Engine, preset: str, on_preset: Callable[[str], None], viewer: Viewer) -> None:
        self.engine, self.on_preset, self.viewer = engine, on_preset, viewer
        self.picker = ui.select(self._options(), value=preset, on_change=self._changed)
        self.picker.props('dense dark borderless options-dense aria-label="Agent preset for the next answer"')
        self.picker.classes("lc-model-picker").mark("preset-picker")
        self.picker.on("popup-show", lambda: self.picker.set_options(self._options(), value=self.picker.value))
        ui.button(icon="tune", on_click=lambda: ui.navigate.to("/presets")).props(
            'flat round dense color=white aria-label="Agent presets"'
        ).mark("manage-presets")
        self.cost = ui.label("").classes("lc-model-badge lc-chat-cost").mark("chat-cost")
        self.cost.set_visibility(False)
        self._cost_text = ""
        self._chat_cost = ChatCost()

    def show(self, preset: str) -> None:
        self.picker.set_options(self._options(), value=preset)

    def update(self, conv: ConversationState | None) -> None:
        cost = self._chat_cost.of(conv) if conv is not None else None  # priced again only when it can change
        words = chat_words(conv, cost)
        if words != self._cost_text:
            self._cost_text = words
            self.cost.set_text(words)
            self.cost.set_visibility(bool(words))
            if cost is not None:
                self.cost.props["title"] = title_of(cost)

    def _options(self) -> dict[str, str]:
        return {p.preset_id: p.name for p in self.engine.presets.all(self.viewer)}

    def _changed(self, e: ValueChangeEventArguments[str]) -> None:
        if e.value:
            self.on_preset(e.value)


def retry_with_preset(actions: Actions, message_id: str, current: str | None) -> None:
    """The "Retry with another preset" menu of one answer (built only when there is another preset)."""
    retry = actions.retry_preset
    others = [(pid, name) for pid, name in actions.presets() if pid != (current or DEFAULT_ID)]
    if retry is None or not others:
        return
    with (
        ui.button(icon="person_search")
        .props('flat dense round size=sm aria-label="Retry with another preset"')
        .mark("retry-with-preset"),
        ui.menu(),
    ):
        for pid, name in others:
            ui.menu_item(f"Retry as {name}", on_click=lambda p=pid: retry(message_id, p)).mark("retry-preset-item")


def preset_model(engine: Engine, preset: str, viewer: Viewer) -> str:
    """The model an answer with this preset uses: the preset's, if the app offers it, else the app's default."""
    chosen = engine.presets.get(preset, viewer=viewer)
    models = engine.settings.models
    return chosen.model if chosen is not None and chosen.model in models else models[0]


def preset_instructions(engine: Engine, preset: str, viewer: Viewer) -> str:
    """What an answer with this preset is told first ("" for none, or a preset that is gone)."""
    chosen = engine.presets.get(preset, viewer=viewer)
    return chosen.instructions if chosen is not None and not chosen.deleted else ""
