"""Agent presets as the engine offers them: list, read any version, save (validated), duplicate, delete, and the
model call a chosen preset makes.

Guarantees:
- A default preset always exists (id ``default``): the command line's model and tools, no instructions. Until
  someone edits it, it is version 1 and not stored; editing it stores version 2, and so on. It cannot be deleted.
- ``save`` checks a draft (``ledger.presets.problems``, plus what needs the running app: the model is one this app
  offers (``EngineSettings.models``, each checked at start-up by ``app.providers.check_model``), a reasoning
  effort only for a model litellm says takes one, every named tool server and tool exists) and raises
  ``InputRejected`` with every problem, one sentence each, storing nothing; otherwise it stores the next version
  (a version saved meanwhile by another tab or instance: ``InputRejected`` saying so, nothing overwritten).
- Deleting stores a last version marked deleted: older versions, and the attempts that name them, stay readable.
- In team mode every read and change is a ``viewer``'s: a person lists, reads and uses the shared presets and their
  own, never another person's (that one reads as missing); a new preset is the person's own, or shared when an admin
  asks (``shared``); a shared one (the default included) is changed or deleted only by an admin, anyone may
  duplicate it into one of their own. An attempt is refused a preset its actor may not use.
- ``provider`` is how an attempt with a preset calls its model: the preset's model (or the one given: Retry with
  another model), its parameters over the model's defaults, and ``AppliedPreset`` (instructions, tools,
  approval overrides), whose (id, version) the attempt records on ``started``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from engine.offline import imported
from engine.people import PERSONAL, Viewer, acting
from engine.provider import AppliedPreset, ProviderConfig, takes_reasoning
from engine.stamps import new_id, now_iso
from engine.tools import ServerHealth
from ledger.decide import InputRejected, NewAttempt
from ledger.presets import DEFAULT_ID, Preset, latest, problems
from ledger.state import ConversationState
from store.presets import PresetStore, VersionTaken

Models = Callable[[], tuple[str, ...]]
Providers = Callable[[str | None], ProviderConfig | None]
Health = Callable[[], tuple[ServerHealth, ...]]


class Presets:
    def __init__(self, store: PresetStore, provider_for: Providers, models: Models, health: Health) -> None:
        self.store, self._provider_for, self._models, self._health = store, provider_for, models, health

    def default(self) -> Preset:
        return Preset(preset_id=DEFAULT_ID, version=1, name="Default")

    def versions(self, preset_id: str | None = None, viewer: Viewer = PERSONAL) -> list[Preset]:
        """Every version (of one preset) ``viewer`` may use, oldest first; the default's version 1 included."""
        stored = self.store.versions()
        if not any(p.preset_id == DEFAULT_ID and p.version == 1 for p in stored):
            stored = [self.default(), *stored]
        return [p for p in stored if (preset_id is None or p.preset_id == preset_id) and viewer.uses(p.owner)]

    def all(self, viewer: Viewer = PERSONAL) -> list[Preset]:
        """The newest version of every preset not deleted ``viewer`` may use: the default first, then by name."""
        live = [p for p in latest(self.versions(viewer=viewer)).values() if not p.deleted]
        return sorted(live, key=lambda p: (p.preset_id != DEFAULT_ID, p.name.casefold(), p.preset_id))

    def get(self, preset_id: str, version: int | None = None, viewer: Viewer = PERSONAL) -> Preset | None:
        """That version (default: the newest), deleted or not; None when it never existed or is not ``viewer``'s."""
        mine = self.versions(preset_id, viewer)
        if version is None:
            return mine[-1] if mine else None
        return next((p for p in mine if p.version == version), None)

    def of_chat(self, conv: ConversationState | None, wanted: str | None = None, viewer: Viewer = PERSONAL) -> str:
        """The preset a chat's next answer runs with (the page's, an editor session's): ``wanted`` (a link's), else
        its last answer's, else the default; only one ``viewer`` may use and not deleted."""
        live = {p.preset_id for p in self.all(viewer)}
        if wanted in live:
            return wanted
        last = max(conv.attempts.values(), key=lambda a: a.started_ts, default=None) if conv is not None else None
        return last.preset[0] if last is not None and last.preset is not None and last.preset[0] in live else DEFAULT_ID

    def model_of(self, conv: ConversationState | None) -> str:
        """The model a chat's next answer is asked of (the page's picker, an editor session's option): the model it
        answered with last, if still offered, else the app's default."""
        models = self._models()
        last = max(conv.attempts.values(), key=lambda a: a.started_ts, default=None) if conv is not None else None
        return last.model if last is not None and last.model in models else models[0]

    def save(self, draft: Preset, viewer: Viewer = PERSONAL, *, shared: bool = False) -> Preset:
        """Store ``draft`` as the next version of its preset (a new preset when its id is empty: ``viewer``'s own,
        or shared when ``shared`` and ``viewer`` is an admin; personal mode's are all shared)."""
        found = self.check(draft)
        if found:
            raise InputRejected(" ".join(found))
        preset_id = draft.preset_id or new_id("preset")
        current = self.get(preset_id, viewer=viewer) if draft.preset_id else None
        if draft.preset_id and current is None:
            raise InputRejected("That preset does not exist.")
        if current is not None and current.deleted:
            raise InputRejected("That preset was deleted; duplicate an older version to use it again.")
        if current is not None:
            owner = self._changeable(current, viewer).owner
        elif shared and viewer.team and not viewer.admin:
            raise InputRejected("Only an admin can share a preset with everyone.")
        else:
            owner = viewer.person if viewer.team and not shared else None
        version = current.version + 1 if current is not None else 1
        saved = dataclasses.replace(
            draft, preset_id=preset_id, version=version, name=draft.name.strip(), deleted=False, saved_at=now_iso(),
            owner=owner,
        )  # fmt: skip
        self._add(saved)
        return saved

    def duplicate(self, preset_id: str, version: int | None = None, viewer: Viewer = PERSONAL) -> Preset:
        """A new preset like that version, ``viewer``'s own (in team mode, even a copy of a shared one)."""
        original = self.get(preset_id, version, viewer)
        if original is None:
            raise InputRejected("That preset does not exist.")
        return self.save(dataclasses.replace(original, preset_id="", name=f"{original.name} (copy)"[:80]), viewer)

    def delete(self, preset_id: str, viewer: Viewer = PERSONAL) -> Preset:
        if preset_id == DEFAULT_ID:
            raise InputRejected("The default preset cannot be deleted (edit it instead).")
        current = self.get(preset_id, viewer=viewer)
        if current is None or current.deleted:
            raise InputRejected("That preset does not exist (any more).")
        self._changeable(current, viewer)
        gone = dataclasses.replace(current, version=current.version + 1, deleted=True, saved_at=now_iso())
        self._add(gone)
        return gone

    @staticmethod
    def _changeable(current: Preset, viewer: Viewer) -> Preset:
        if not viewer.changes(current.owner):
            raise InputRejected("Only an admin can change a shared preset; duplicate it to make one of your own.")
        return current

    def check(self, draft: Preset) -> list[str]:
        """Every problem of ``draft``, one sentence each (empty: it can be saved)."""
        found = problems(draft)
        models = self._models()
        if draft.model is not None and draft.model not in models:
            found.append(f"Model: {draft.model!r} is not one this app offers ({', '.join(models)}).")
        elif draft.reasoning_effort is not None:
            model = draft.model or models[0]
            if imported() is not None and not takes_reasoning(model):  # (never imports litellm on the loop)
                found.append(f"Reasoning effort: {model} does not take one (litellm's model map says so).")
        health = self._health()
        servers = {h.name for h in health}
        tools = {t for h in health for t in h.tools}
        settled = all(h.state in ("ready", "failed", "stopped") for h in health)
        for server in draft.servers or ():
            if server not in servers:
                found.append(f"Tool server {server!r} is not configured ({', '.join(sorted(servers)) or 'none is'}).")
        for tool in draft.tools or ():
            if tool not in tools and settled:
                found.append(f"Tool {tool!r} is not offered by any tool server.")
        for tool, _mode in draft.approvals:
            if tool != "*" and tool not in tools and settled:
                found.append(f"Approval for {tool!r}: no tool server offers a tool of that name.")
        return found

    def provider(self, preset_id: str | None, model: str | None = None) -> ProviderConfig:
        """How an attempt with ``preset_id`` (None: no preset, the app's model) calls ``model`` (None: the
        preset's). Raises ``InputRejected`` for a preset or model that is not there."""
        preset = self.get(preset_id) if preset_id is not None else None
        person = acting()  # a command's person may use only theirs and the shared ones (None: the engine's own work)
        if preset is not None and person is not None and preset.owner not in (None, person):
            preset = None
        if preset_id is not None and (preset is None or preset.deleted):
            raise InputRejected("That preset no longer exists; choose another one.")
        chosen = model or (preset.model if preset is not None else None)
        base = self._provider_for(chosen)
        if base is None:
            raise InputRejected(f"The model {chosen!r} is not one this app offers.")
        if preset is None:
            return base
        applied = AppliedPreset(
            preset_id=preset.preset_id, version=preset.version, instructions=preset.instructions,
            servers=preset.servers, tools=preset.tools, approvals=preset.approvals,
        )  # fmt: skip
        return dataclasses.replace(
            base,
            temperature=preset.temperature if preset.temperature is not None else base.temperature,
            top_p=preset.top_p if preset.top_p is not None else base.top_p,
            max_tokens=preset.max_tokens if preset.max_tokens is not None else base.max_tokens,
            reasoning_effort=preset.reasoning_effort,
            preset=applied,
        )

    def _add(self, preset: Preset) -> None:
        try:
            self.store.add(preset)
        except VersionTaken:
            raise InputRejected(
                f"{preset.name!r} was changed meanwhile (in another tab?); reopen it to see the newest version."
            ) from None


def new_attempt(provider: ProviderConfig) -> NewAttempt:
    """A new attempt's id, with the model and the preset version it runs with (recorded on ``started``)."""
    return NewAttempt(new_id("att"), provider.model, provider.preset_key)
