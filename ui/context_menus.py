"""The message box's "/" prompts and "@" resources (the tool servers' MCP prompts and resources), server side.

Guarantees:
- The browser's menu (``static/context_menus.js``: a listbox driven by the keyboard alone) asks for the lists when
  it opens; they are read from the running servers then (``engine.tools.prompts``, ``engine.tools.resources``),
  never cached past the opening, and sent back with each item's name, server and description. The servers are
  the configured ones and the remote ones the page's person uses (``engine.tools.remote_context``), through that
  person's own connection: one that is not connected is started then without asking anyone; one that needs a
  sign-in first is one disabled line, "Sign in to <server> to use its prompts" (or resources), never an error.
- Choosing a prompt or a resource without arguments fetches it at once; one with arguments (a prompt's, a
  template's ``{name}``) opens a small form first, its fields offering the server's completions as they are typed
  (``completion/complete``), Insert fetching it and Cancel (or Escape) doing nothing.
- What is fetched is stored by sha256 (``engine.files.fetched``) and becomes chips of the draft (``AttachmentTray
  .offer``), each saying where it came from ("from prompt demo/standup"): sent with the message, the same bytes on
  every Retry, edit and Branch. A failure is a notice in a sentence; the draft is untouched.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from nicegui import ui
from nicegui.events import GenericEventArguments

from engine.files import from_prompt, from_resource
from engine.tools import FetchFailed, PromptInfo, ResourceInfo, prompts, remote_context, resources
from ledger.decide import InputRejected
from ledger.events import Attachment
from ui.attachments import AttachmentTray, remember
from ui.notices import notice

log = logging.getLogger("ledger_chat.ui")
VARIABLE = re.compile(r"\{([A-Za-z0-9_]+)\}")


def _hub(person: str | None) -> Any:
    """The app's tool servers and the remote servers ``person`` uses, through their own connections."""
    from ui.context import current

    engine = current().engine
    return remote_context.for_person(engine.tools, person) if engine is not None else None


class ContextMenus:
    """The "/" and "@" menus of one message box, adding what is chosen to ``tray``."""

    def __init__(self, tray: AttachmentTray) -> None:
        from ui.context import current

        self.tray = tray
        self.person = current().viewer().person  # the page's person: whose remote servers the menus reach
        self.prompts: dict[str, PromptInfo] = {}
        self.resources: dict[str, ResourceInfo] = {}
        self.root = ui.element("div").classes("lc-menus")
        self.root.props["data-lc-menus"] = ""
        self.root.on("lcmenu", self._event, ["detail"])

    async def _event(self, e: GenericEventArguments) -> None:
        detail: dict[str, Any] = (e.args or {}).get("detail") or {}
        trigger, key = detail.get("trigger"), str(detail.get("key") or "")
        if detail.get("kind") == "open" and trigger in ("/", "@"):
            await self._send_list(trigger)
        elif detail.get("kind") == "pick" and trigger == "/" and key in self.prompts:
            await self._prompt(self.prompts[key])
        elif detail.get("kind") == "pick" and trigger == "@" and key in self.resources:
            await self._resource(self.resources[key])

    async def _send_list(self, trigger: str) -> None:
        hub, items = _hub(self.person), list[dict[str, Any]]()
        waiting = await remote_context.reach(hub) if hub is not None else {}
        if hub is not None and trigger == "/":
            self.prompts = {f"{p.server}/{p.name}": p for p in await prompts.prompts(hub)}
            items = [{"key": k, "label": p.title, "name": p.name, "server": p.server, "description": p.description}
                     for k, p in self.prompts.items()]  # fmt: skip
        elif hub is not None:
            self.resources = {f"{r.server} {r.uri or r.template}": r for r in await resources.resources(hub)}
            items = [{"key": k, "label": r.title, "name": r.uri or r.template, "server": r.server,
                      "description": r.description} for k, r in self.resources.items()]  # fmt: skip
        what = "prompts" if trigger == "/" else "resources"
        items += [{"key": f"sign-in {server}", "name": "", "server": server, "disabled": True,
                   "label": f"Sign in to {server} to use its {what}" if why == remote_context.SIGN_IN
                   else f"{server} is still connecting: open the menu again in a moment",
                   "description": "Connect it in the Tools panel." if why == remote_context.SIGN_IN else ""}
                  for server, why in waiting.items()]  # fmt: skip
        self.root.client.run_javascript(f"window.lcMenus && lcMenus.items({json.dumps(trigger)}, {json.dumps(items)})")

    async def _prompt(self, prompt: PromptInfo) -> None:
        values: dict[str, str] | None = {}
        if prompt.arguments:
            fields = [(a.name, a.description, a.required) for a in prompt.arguments]
            values = await self._form(
                f"Prompt {prompt.server}/{prompt.name}", fields, prompt.server, ("prompt", prompt.name)
            )
        if values is None:
            return
        try:
            got = await prompts.get(_hub(self.person), prompt.server, prompt.name, values)
            self._add(await from_prompt(self.tray.files, prompt.server, prompt.name, got))
        except (FetchFailed, InputRejected) as exc:
            notice(f"The prompt {prompt.server}/{prompt.name} could not be inserted: {exc}", "warning", multi_line=True)

    async def _resource(self, resource: ResourceInfo) -> None:
        uri = resource.uri
        if resource.template:
            fields = [(name, "", True) for name in VARIABLE.findall(resource.template)]
            title = f"Resource {resource.server} {resource.template}"
            values = await self._form(title, fields, resource.server, ("template", resource.template))
            if values is None:
                return
            uri = VARIABLE.sub(lambda m: values.get(m.group(1), ""), resource.template)
        try:
            pieces = await resources.read(_hub(self.person), resource.server, uri)
            self._add(await from_resource(self.tray.files, resource.server, uri, pieces))
        except (FetchFailed, InputRejected) as exc:
            notice(f"The resource {uri} could not be attached: {exc}", "warning", multi_line=True)

    def _add(self, attachments: tuple[Attachment, ...]) -> None:
        for attachment in attachments:
            remember(attachment)  # this process fetched it: its chip and thumbnail may be shown to this person
            self.tray.offer(attachment)

    async def _form(
        self, title: str, fields: list[tuple[str, str, bool]], server: str, ref: Any
    ) -> dict[str, str] | None:
        """The arguments a person gives (None: cancelled), each field offering the server's completions."""
        inputs: dict[str, ui.input] = {}
        with ui.dialog() as dialog, ui.card().classes("lc-menu-form"):
            ui.label(title).classes("lc-menu-name")
            for name, description, required in fields:
                box = ui.input(label=name + (" (required)" if required else ""), placeholder=description)
                box.props(f'aria-label="{name}"').mark(f"argument-{name}")
                box.on_value_change(lambda e, n=name: self._complete(inputs, n, server, ref, e.value))
                inputs[name] = box
            with ui.row():
                ui.button("Insert", on_click=lambda: dialog.submit(True)).mark("insert-context")
                ui.button("Cancel", on_click=lambda: dialog.submit(False)).props("flat")
        dialog.props("aria-label='Arguments'")
        for box in inputs.values():
            box.on("keydown.enter", lambda: dialog.submit(True))
        ok = await dialog
        dialog.delete()
        if not ok:
            return None
        values = {name: str(box.value or "") for name, box in inputs.items()}
        missing = [name for name, _, required in fields if required and not values[name]]
        if missing:
            notice(f"Not inserted: {', '.join(missing)} must be given.", "warning")
            return None
        return values

    async def _complete(self, inputs: dict[str, ui.input], name: str, server: str, ref: Any, value: str) -> None:
        context = {n: str(b.value or "") for n, b in inputs.items()}
        found = await prompts.complete(_hub(self.person), server, ref, name, value or "", context)
        if name in inputs and not inputs[name].is_deleted:
            inputs[name].set_autocomplete(list(found))
