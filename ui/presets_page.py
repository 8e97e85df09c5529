"""The agent presets page (``/presets``): list, create, edit, duplicate, delete; every version readable.

Guarantees:
- Every change goes through the engine (``engine.commands.presets``): saving stores a new version, duplicating a new
  preset, deleting a last version marked deleted; older versions stay listed and readable (read-only).
- A refused save shows every problem, one sentence each, in an alert next to the form and under the field it names,
  and keeps what was typed.
- Every control has an accessible name; the page links back to the chats (``/``) and a chat's header links here.
- In team mode a person lists the shared presets and their own, each marked "Shared" or "Yours"; a shared one
  (the default included) is read-only for a member, who may duplicate it into one of their own; an admin's new
  preset may be shared with everyone ("Share with everyone").
- Approval overrides are typed as JSON in the approval configuration's shape (``{"*": "ask", "read_file": "run"}``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from nicegui import ui

from engine.commands import Engine, InputRejected
from engine.people import PERSONAL, Viewer
from ledger.errors import StoreError
from ledger.presets import DEFAULT_ID, REASONING_EFFORTS, Preset
from ui.format import model_label
from ui.notices import notice
from ui.style import add_style

APP_MODEL = "(the app's model)"
NO_EFFORT = "(the model's default)"


class PresetsPage:
    def __init__(self, engine: Engine, chosen: str | None = None, viewer: Viewer = PERSONAL) -> None:
        self.engine, self.viewer = engine, viewer
        self.chosen = chosen or DEFAULT_ID
        self.share: ui.switch | None = None

    def build(self) -> None:
        add_style()
        ui.page_title("Agent presets · Ledger Chat")
        with ui.header().classes("lc-header items-center gap-2 px-3 py-1 no-wrap"):
            ui.button(icon="arrow_back", on_click=lambda: ui.navigate.to("/")).props(
                'flat round dense color=white aria-label="Back to the chats"'
            ).mark("back-to-chats")
            ui.label("Agent presets").classes("text-lg font-medium")
        with ui.row().classes("w-full max-w-3xl mx-auto gap-4 px-3 items-start no-wrap"):
            self.list_box = ui.column().classes("gap-1").mark("preset-list")
            self.form_box = ui.column().classes("w-full flex-grow gap-2").mark("preset-form")
        self.show(self.chosen)

    def show(self, preset_id: str | None, version: int | None = None) -> None:
        """List every preset and open one (None: a new, empty one) in the form."""
        self.chosen = preset_id or ""
        self.list_box.clear()
        with self.list_box:
            ui.button("New preset", icon="add", on_click=lambda: self.show(None)).props(
                'no-caps aria-label="New preset"'
            ).mark("new-preset")
            for preset in self.engine.presets.all(self.viewer):
                flat = "" if preset.preset_id == preset_id else "flat "
                whose = f" ({_whose(preset)})" if self.viewer.team else ""
                button = ui.button(preset.name + whose, on_click=lambda p=preset.preset_id: self.show(p))
                button.props(f'{flat}no-caps dense aria-label="Open preset {preset.name}"')
                button.classes("w-full").mark("preset-item")
        found = self.engine.presets.get(preset_id, version, self.viewer) if preset_id else None
        draft = found or Preset(preset_id="", version=0, name="")
        self.form_box.clear()
        with self.form_box:
            self._form(draft, old=version is not None)

    def _form(self, draft: Preset, *, old: bool) -> None:
        title = f"{draft.name} · version {draft.version}" if draft.preset_id else "New preset"
        theirs = bool(draft.preset_id) and not self.viewer.changes(draft.owner)
        read_only = old or theirs
        ui.label(title + (" (an older version, read-only)" if old else "")).classes("text-lg")
        if self.viewer.team and draft.preset_id:
            words = "Yours." if draft.owner is not None else "Shared with everyone by an admin."
            words += " Only an admin can change it; duplicate it to make one of your own." if theirs else ""
            ui.label(words).classes("lc-meta").mark("preset-whose")
        self.errors = ui.label("").classes("lc-error whitespace-pre-wrap").props("role=alert").mark("preset-errors")
        self.errors.set_visibility(False)
        self.name = ui.input("Name", value=draft.name).props('aria-label="Name"').classes("w-full").mark("preset-name")
        self.instructions = (
            ui.textarea("Instructions (the system prompt)", value=draft.instructions)
            .props('autogrow aria-label="Instructions"')
            .classes("w-full")
            .mark("preset-instructions")
        )
        models = {APP_MODEL: APP_MODEL} | {m: model_label(m) for m in self.engine.settings.models}
        self.model = ui.select(models, value=draft.model or APP_MODEL, label="Model").props('aria-label="Model"')
        self.model.classes("w-full").mark("preset-model")
        with ui.row().classes("w-full gap-2 no-wrap"):
            self.temperature = _number("Temperature (0-2)", draft.temperature, "preset-temperature")
            self.top_p = _number("Top P (above 0, at most 1)", draft.top_p, "preset-top-p")
            self.max_tokens = _number("Max output tokens", draft.max_tokens, "preset-max-tokens")
        efforts = [NO_EFFORT, *REASONING_EFFORTS]
        self.effort = ui.select(efforts, value=draft.reasoning_effort or NO_EFFORT, label="Reasoning effort")
        self.effort.props('aria-label="Reasoning effort (models that take one)"').classes("w-full")
        health = self.engine.tool_health()
        servers = [h.name for h in health]
        tools = sorted({t for h in health for t in h.tools} | set(draft.tools or ()))
        self.all_tools = ui.switch("Every tool of every server", value=draft.tools is None and draft.servers is None)
        self.all_tools.props('aria-label="Every tool of every server"').mark("preset-all-tools")
        with ui.column().classes("w-full gap-1").bind_visibility_from(self.all_tools, "value", value=False):
            self.servers = ui.select(servers, value=list(draft.servers or ()), multiple=True, label="Tool servers")
            self.servers.props('use-chips aria-label="Tool servers (none chosen: every server)"').classes("w-full")
            self.tools = ui.select(tools, value=list(draft.tools or ()), multiple=True, label="Tools")
            self.tools.props('use-chips aria-label="Tools (none chosen: no tool)"').classes("w-full")
            self.tools.mark("preset-tools")
        self.approvals = (
            ui.input(
                'Approval overrides (JSON, e.g. {"*": "ask", "read_file": "run"})',
                value=json.dumps(dict(draft.approvals)) if draft.approvals else "",
            )
            .props('aria-label="Approval overrides"')
            .classes("w-full font-mono")
        )
        self.approvals.mark("preset-approvals")
        self.share = None
        if self.viewer.team and self.viewer.admin and not draft.preset_id:
            self.share = ui.switch("Share with everyone", value=False).props('aria-label="Share with everyone"')
            self.share.mark("preset-share")
        with ui.row().classes("gap-2 items-center"):
            if not read_only:
                ui.button("Save", icon="save", on_click=lambda: self._save(draft)).props(
                    'no-caps aria-label="Save the preset"'
                ).mark("preset-save")
            if draft.preset_id:
                ui.button("Duplicate", icon="content_copy", on_click=lambda: self._duplicate(draft)).props(
                    'flat no-caps aria-label="Duplicate the preset"'
                ).mark("preset-duplicate")
                ui.button("Start a chat with it", icon="chat", on_click=lambda: self._chat(draft.preset_id)).props(
                    'flat no-caps aria-label="Start a chat with this preset"'
                ).mark("preset-chat")
            if draft.preset_id and draft.preset_id != DEFAULT_ID and not read_only:
                ui.button("Delete", icon="delete", on_click=lambda: self._delete(draft)).props(
                    'flat no-caps color=negative aria-label="Delete the preset"'
                ).mark("preset-delete")
        if draft.preset_id:
            self._versions(draft)

    def _versions(self, shown: Preset) -> None:
        versions = self.engine.presets.versions(shown.preset_id, self.viewer)
        with ui.expansion(f"Versions ({len(versions)})", icon="history").classes("w-full").mark("preset-versions"):
            for preset in reversed(versions):
                words = f"Version {preset.version}" + (" (deleted)" if preset.deleted else "")
                words += f" · {preset.saved_at[:19].replace('T', ' ')}" if preset.saved_at else " · built in"
                ui.button(words, on_click=lambda v=preset.version: self.show(shown.preset_id, v)).props(
                    f'flat dense no-caps aria-label="Show version {preset.version}"'
                ).mark("preset-version")

    def _read(self, draft: Preset) -> Preset:
        """The form as a preset (raises ``InputRejected`` for what cannot even be read)."""
        everything = bool(self.all_tools.value)
        return Preset(
            preset_id=draft.preset_id,
            name=str(self.name.value or ""),
            instructions=str(self.instructions.value or ""),
            model=None if self.model.value == APP_MODEL else str(self.model.value),
            temperature=_float(self.temperature.value),
            top_p=_float(self.top_p.value),
            max_tokens=_int(self.max_tokens.value, "Max output tokens"),
            reasoning_effort=None if self.effort.value == NO_EFFORT else str(self.effort.value),
            servers=None if everything or not self.servers.value else tuple(self.servers.value),
            tools=None if everything else tuple(self.tools.value or ()),
            approvals=_approvals(str(self.approvals.value or "")),
        )

    def _save(self, draft: Preset) -> None:
        try:
            shared = self.share is not None and bool(self.share.value)
            saved = self.engine.presets.save(self._read(draft), self.viewer, shared=shared)
        except (InputRejected, StoreError) as exc:  # what was typed stays in the form
            words = str(exc) if isinstance(exc, InputRejected) else f"Not saved: {exc}. What you typed is still here."
            problems = re.split(r"(?<=\.)\s+(?=[A-Z])", words)  # one sentence each
            self.errors.set_text("\n".join(problems))
            self.errors.set_visibility(True)
            self._on_fields(problems)
            return
        notice(f"Saved {saved.name!r} (version {saved.version})", "positive")
        self.show(saved.preset_id)

    def _on_fields(self, problems: list[str]) -> None:
        """Each problem also under the field it names (the alert above lists them all, for a screen reader first);
        a field's message goes when its value changes."""
        fields = {
            "Name": self.name, "Instructions": self.instructions, "Model": self.model,
            "Temperature": self.temperature, "Top P": self.top_p, "Max output tokens": self.max_tokens,
            "Reasoning effort": self.effort, "Tool server": self.servers, "Tool ": self.tools,
            "Approval": self.approvals,
        }  # fmt: skip
        for field in fields.values():
            field.error = None
        for problem in problems:
            named = next((f for prefix, f in fields.items() if problem.startswith(prefix)), None)
            if named is not None and named.error is None:
                named.error = problem.split(": ", 1)[-1]

    def _duplicate(self, draft: Preset) -> None:
        try:
            copy = self.engine.presets.duplicate(draft.preset_id, draft.version, self.viewer)
        except (InputRejected, StoreError) as exc:
            notice(str(exc), "warning")
            return
        self.show(copy.preset_id)

    def _delete(self, draft: Preset) -> None:
        try:
            self.engine.presets.delete(draft.preset_id, self.viewer)
        except (InputRejected, StoreError) as exc:
            notice(str(exc), "warning")
            return
        notice(f"Deleted {draft.name!r}; its versions stay readable in the chats that used them", "positive")
        self.show(DEFAULT_ID)

    def _chat(self, preset_id: str) -> None:
        ui.navigate.to(f"/?preset={preset_id}")


def _whose(preset: Preset) -> str:
    return "yours" if preset.owner is not None else "shared"


def _number(label: str, value: float | None, marker: str) -> ui.number:
    field = ui.number(label, value=value).props(f'clearable aria-label="{label}"').classes("w-full")
    return field.mark(marker)


def _float(value: Any) -> float | None:
    return None if value is None or value == "" else float(value)


def _int(value: Any, what: str) -> int | None:
    if value is None or value == "":
        return None
    if float(value) != int(float(value)):
        raise InputRejected(f"{what}: {value} is not a whole number.")
    return int(float(value))


def _approvals(text: str) -> tuple[tuple[str, str], ...]:
    if not text.strip():
        return ()
    try:
        data = json.loads(text)
    except ValueError:
        example = '{"*": "ask", "read_file": "run"}'
        raise InputRejected(f"Approval overrides: not valid JSON; write e.g. {example}.") from None
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise InputRejected('Approval overrides: an object of tool names to modes, e.g. {"*": "ask"}.')
    return tuple(sorted(data.items()))
