"""How an agent preset shapes the requests of an attempt: the one place its instructions enter a request, the
tools it offers, which calls it lets run, and the approval overrides it hands the approval resolver.

Guarantees:
- ``with_instructions`` is the only code that puts a preset's instructions into a request: first, as one
  ``system`` message, in every request of an attempt that runs with a preset that has instructions (every step,
  every re-send: ``engine.turns.turn`` builds each step's messages on top of the first ones); a request of an attempt
  without instructions carries no system message from here. A history that starts with a system message of its
  own (a summary, say) keeps it, after the instructions.
- ``offered`` gives the model only the tools the preset allows (``servers``/``tools`` None: every one);
  ``allows`` is checked again before a call runs (``engine.turns.tool_runs``), so a name the model invents that the
  preset does not allow is answered "not available" and never runs.
- ``approval_overrides`` is the preset's mapping in the approval configuration's shape
  (``{"*": "ask", "read_file": "run"}``), or None without a preset: the hook the approval resolver takes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.tools import ToolHub


@dataclass(frozen=True, slots=True)
class AppliedPreset:
    """The part of one preset version an attempt runs with beyond the model parameters (``ProviderConfig``)."""

    preset_id: str
    version: int
    instructions: str = ""
    servers: tuple[str, ...] | None = None
    tools: tuple[str, ...] | None = None
    approvals: tuple[tuple[str, str], ...] = ()

    @property
    def key(self) -> tuple[str, int]:
        return (self.preset_id, self.version)


def with_instructions(messages: list[dict[str, Any]], preset: AppliedPreset | None) -> list[dict[str, Any]]:
    """``messages`` with the preset's instructions first (a ``system`` message); unchanged without any."""
    if preset is None or not preset.instructions.strip():
        return messages
    return [{"role": "system", "content": preset.instructions}, *messages]


def allows(preset: AppliedPreset | None, server: str, tool: str) -> bool:
    """Whether a call of ``tool`` on ``server`` may run for an attempt with ``preset``."""
    if preset is None:
        return True
    if preset.servers is not None and server not in preset.servers:
        return False
    return preset.tools is None or tool in preset.tools


def offered(hub: ToolHub | None, preset: AppliedPreset | None) -> list[dict[str, Any]]:
    """The tools the model is offered in a request of an attempt with ``preset`` (litellm's ``tools=`` shape)."""
    if hub is None:
        return []
    schemas = hub.schemas()
    if preset is None:
        return schemas
    kept = []
    for schema in schemas:
        resolved = hub.resolve(str(schema["function"]["name"]))
        if resolved is not None and allows(preset, resolved.server, resolved.tool):
            kept.append(schema)
    return kept


def approval_overrides(preset: AppliedPreset | None) -> Mapping[str, str] | None:
    """The preset's approval overrides for the approval resolver (None: no preset, the configuration decides)."""
    return dict(preset.approvals) if preset is not None and preset.approvals else None
