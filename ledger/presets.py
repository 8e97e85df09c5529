"""Agent presets as values: who the agent is (instructions), which model it runs, with what parameters, which tools
it may use and how their calls are approved; every saved change is a new version.

Guarantees:
- A ``Preset`` is one immutable version; ``(preset_id, version)`` names it for good (an attempt records that pair
  on ``started``); a deletion is a last version with ``deleted`` set, so every older version stays readable.
- ``problems`` says, in sentences a person can act on, what is wrong with a preset before it is saved (an empty
  name, out-of-range parameters, an approval mode that does not exist); what needs the running app (is the model
  offered, does the tool exist) is checked by ``engine.commands.presets``.
- ``to_dict``/``from_dict`` are the one plain-dict form (the TinyDB file, the PostgreSQL rows, the export):
  ``from_dict(to_dict(p)) == p``; an unknown key or a wrong type raises ``ValueError`` naming it.
- ``owner`` is whose it is in team mode (a person id); None is a shared one (every preset in personal mode, and the
  ones an admin shares): everyone may use it, only an admin may change it (``engine.commands.presets``).
- ``approvals`` has exactly the shape of the approval configuration (``{"*": "ask", "read_file": "run"}``, modes
  ``run`` | ``ask`` | ``once`` | ``never``), kept as sorted pairs so the value stays hashable.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields
from typing import Any, Literal, get_args

ApprovalMode = Literal["run", "ask", "once", "never"]
APPROVAL_MODES: tuple[str, ...] = get_args(ApprovalMode)
REASONING_EFFORTS: tuple[str, ...] = ("minimal", "low", "medium", "high")
DEFAULT_ID = "default"
MAX_NAME = 80
MAX_INSTRUCTIONS = 20_000


@dataclass(frozen=True, kw_only=True, slots=True)
class Preset:
    """One version of a preset. ``model`` None: the app's default model; ``servers``/``tools`` None: every
    configured one (a tool is named as its server lists it); ``approvals``: (tool or ``*``, mode) pairs."""

    preset_id: str
    version: int = 1
    name: str
    instructions: str = ""
    model: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    reasoning_effort: str | None = None
    servers: tuple[str, ...] | None = None
    tools: tuple[str, ...] | None = None
    approvals: tuple[tuple[str, str], ...] = ()
    deleted: bool = False
    saved_at: str = ""
    owner: str | None = None  # team mode: the person whose own it is; None: shared

    @property
    def key(self) -> tuple[str, int]:
        return (self.preset_id, self.version)

    @property
    def approval_overrides(self) -> dict[str, str]:
        """The overrides in the approval configuration's shape (``{"*": "ask", "read_file": "run"}``)."""
        return dict(self.approvals)


def problems(preset: Preset) -> list[str]:
    """What is wrong with ``preset``, one sentence each (empty: it can be saved as far as values go)."""
    out: list[str] = []
    if not preset.name.strip():
        out.append("Name: a preset needs a name.")
    elif len(preset.name) > MAX_NAME:
        out.append(f"Name: at most {MAX_NAME} characters (this one has {len(preset.name)}).")
    if len(preset.instructions) > MAX_INSTRUCTIONS:
        out.append(f"Instructions: at most {MAX_INSTRUCTIONS:,} characters (these have {len(preset.instructions):,}).")
    if preset.temperature is not None and not (_finite(preset.temperature) and 0 <= preset.temperature <= 2):
        out.append(f"Temperature: {preset.temperature:g} is out of range; use a number from 0 to 2.")
    if preset.top_p is not None and not (_finite(preset.top_p) and 0 < preset.top_p <= 1):
        out.append(f"Top P: {preset.top_p:g} is out of range; use a number above 0, at most 1.")
    if preset.max_tokens is not None and not 1 <= preset.max_tokens <= 1_000_000:
        out.append(f"Max output tokens: {preset.max_tokens} is out of range; use a whole number from 1 to 1,000,000.")
    if preset.reasoning_effort is not None and preset.reasoning_effort not in REASONING_EFFORTS:
        out.append(f"Reasoning effort: {preset.reasoning_effort!r} is not one of {', '.join(REASONING_EFFORTS)}.")
    for tool, mode in preset.approvals:
        if mode not in APPROVAL_MODES:
            out.append(f"Approval for {tool!r}: {mode!r} is not one of {', '.join(APPROVAL_MODES)}.")
        if not tool.strip():
            out.append("Approval: a tool name (or * for every tool) is missing.")
    return out


def _finite(value: float) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


_TUPLES = ("servers", "tools")
_OPTIONAL: dict[str, tuple[type, ...]] = {
    "model": (str,),
    "temperature": (int, float),
    "top_p": (int, float),
    "max_tokens": (int,),
    "reasoning_effort": (str,),
    "owner": (str,),
}


def to_dict(preset: Preset) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field in fields(Preset):
        value = getattr(preset, field.name)
        if field.name == "approvals":
            value = dict(value)
        elif field.name in _TUPLES and value is not None:
            value = list(value)
        elif field.name == "owner" and value is None:
            continue  # a personal-mode preset reads as before in an older version
        out[field.name] = value
    return out


def from_dict(data: dict[str, Any]) -> Preset:
    known = {f.name for f in fields(Preset)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"preset: unknown field {unknown[0]!r}")
    values: dict[str, Any] = {}
    for name, value in data.items():
        if name == "approvals":
            if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
                raise ValueError("preset: 'approvals' must map tool names to modes")
            value = tuple(sorted(value.items()))
        elif name in _TUPLES:
            if value is not None and (not isinstance(value, list) or not all(isinstance(v, str) for v in value)):
                raise ValueError(f"preset: {name!r} must be a list of names or null")
            value = tuple(value) if value is not None else None
        elif name in _OPTIONAL:
            if value is not None and (isinstance(value, bool) or not isinstance(value, _OPTIONAL[name])):
                raise ValueError(f"preset: {name!r} has the wrong type")
        elif name in ("preset_id", "name", "instructions", "saved_at") and not isinstance(value, str):
            raise ValueError(f"preset: {name!r} must be text")
        elif name == "version" and (isinstance(value, bool) or not isinstance(value, int)):
            raise ValueError("preset: 'version' must be a whole number")
        elif name == "deleted" and not isinstance(value, bool):
            raise ValueError("preset: 'deleted' must be true or false")
        values[name] = value
    for required in ("preset_id", "name"):
        if required not in values:
            raise ValueError(f"preset: {required!r} is missing")
    return Preset(**values)


def dumps(versions: list[Preset]) -> str:
    """The presets file's (and the export's ``presets.json``) text: ``{"presets": [version, ...]}``."""
    return json.dumps({"presets": [to_dict(p) for p in versions]}, ensure_ascii=False, indent=1)


def latest(versions: list[Preset]) -> dict[str, Preset]:
    """The newest version of each preset id (deleted ones included: the caller decides)."""
    out: dict[str, Preset] = {}
    for preset in versions:
        if preset.preset_id not in out or out[preset.preset_id].version < preset.version:
            out[preset.preset_id] = preset
    return out
