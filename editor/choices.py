"""What an editor session chooses for its next prompts, and how the editor is shown it: the agent preset (the
session's mode, the config option ``mode`` and one "/" command per preset) and the model (the config option
``model``).

Guarantees: pure over the engine's presets and models (reads them, writes nothing).
- ``Choice`` starts as the page starts a chat (``Engine.presets.of_chat`` and ``Presets.model_of``: a loaded
  chat's last answer's preset and model while they are still offered, else the default preset and the app's model).
- Choosing a preset makes its model the session's when the app offers it (as the page's preset picker does);
  choosing a model changes the model alone. An unknown preset or model raises ``RequestError`` invalid params and
  changes nothing. The chosen model and preset reach the engine's ``send``, which records them on the attempt's
  ``started`` (the same record as an answer asked for in the page).
- ``commands`` lists each preset as a command named after it (lower case, words joined by ``-``, unique; then the
  tool servers' prompts, ``editor.prompts``, whose names have a dot); a prompt
  that starts with ``/name`` (``command_of``) runs that preset for this prompt only, its text the rest of the
  prompt; ``/name`` alone chooses the preset for the next prompts (as ``session/set_mode`` does).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from acp import RequestError
from acp.helpers import update_available_commands
from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
    UnstructuredCommandInput,
)

from engine.commands import Engine
from ledger.presets import Preset
from ledger.state import ConversationState

MODE, MODEL = "mode", "model"  # the config options' ids


@dataclass(slots=True)
class Choice:
    """The preset and model of a session's next prompts."""

    preset: str
    model: str

    @classmethod
    def of(cls, engine: Engine, conv: ConversationState | None) -> Choice:
        return cls(engine.presets.of_chat(conv), engine.presets.model_of(conv))

    def choose_preset(self, engine: Engine, preset_id: str) -> None:
        found = {p.preset_id: p for p in engine.presets.all()}.get(preset_id)
        if found is None:
            raise RequestError.invalid_params({"details": f"no agent preset {preset_id!r} (see the session's modes)"})
        self.preset = preset_id
        if found.model in engine.settings.models:
            self.model = found.model

    def choose_model(self, engine: Engine, model: str) -> None:
        if model not in engine.settings.models:
            raise RequestError.invalid_params({"details": f"the app offers no model {model!r}"})
        self.model = model

    def choose(self, engine: Engine, config_id: str, value: str | bool) -> None:
        """``session/set_config_option``: ``mode`` (a preset id) or ``model``."""
        if config_id not in (MODE, MODEL) or not isinstance(value, str):
            raise RequestError.invalid_params({"details": f"no config option {config_id!r} taking {value!r}"})
        (self.choose_preset if config_id == MODE else self.choose_model)(engine, value)


def modes(engine: Engine, choice: Choice) -> SessionModeState:
    """The agent presets as modes (each described by its instructions' first line, or its model)."""
    return SessionModeState(
        current_mode_id=choice.preset,
        available_modes=[SessionMode(id=p.preset_id, name=p.name, description=_about(p)) for p in engine.presets.all()],
    )


def config_options(engine: Engine, choice: Choice) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
    """The session's config options: the agent preset (``mode``) and the model (``model``)."""
    all_presets = engine.presets.all()
    presets = [SessionConfigSelectOption(value=p.preset_id, name=p.name, description=_about(p)) for p in all_presets]
    models = [SessionConfigSelectOption(value=m, name=m) for m in engine.settings.models]
    return [
        SessionConfigOptionSelect(
            id=MODE, name="Agent preset", category="mode", type="select", current_value=choice.preset, options=presets
        ),  # fmt: skip
        SessionConfigOptionSelect(
            id=MODEL, name="Model", category="model", type="select", current_value=choice.model, options=models
        ),  # fmt: skip
    ]


def commands(engine: Engine, more: Iterable[AvailableCommand] = ()) -> AvailableCommandsUpdate:
    """Every agent preset as a "/" command, then ``more`` (the tool servers' prompts: ``editor.prompts``)."""
    hint = UnstructuredCommandInput(hint="what to ask with this preset (nothing: use it from now on)")
    presets = [
        AvailableCommand(
            name=name,
            description=f"Answer with the agent preset {p.name}: {_about(p)}",
            input=AvailableCommandInput(root=hint),
        )  # fmt: skip
        for name, p in _named(engine).items()
    ]
    return update_available_commands([*presets, *more])


def command_of(engine: Engine, text: str) -> tuple[str | None, str]:
    """(the preset a prompt's leading ``/name`` names, the prompt's text without it); (None, text) for none."""
    found = re.match(r"/([a-z0-9_-]+)(?:\s+|$)", text)
    preset = _named(engine).get(found.group(1)) if found else None
    if found is None or preset is None:
        return None, text
    return preset.preset_id, text[found.end() :]


def _named(engine: Engine) -> dict[str, Preset]:
    named: dict[str, Preset] = {}
    for preset in engine.presets.all():
        name = re.sub(r"[^a-z0-9_]+", "-", preset.name.casefold()).strip("-") or preset.preset_id
        base, n = name, 2
        while name in named:
            name, n = f"{base}-{n}", n + 1
        named[name] = preset
    return named


def _about(preset: Preset) -> str:
    first = (preset.instructions.strip().splitlines() or [""])[0][:120]
    return first or (f"the model {preset.model}" if preset.model else "the app's model, no instructions")
