"""A tool card: one tool call inside an assistant message, from the model writing it to its one result.

Guarantees: the card's element carries ``data-tool-call`` (the call id) and ``data-tool-status`` (``writing`` |
``queued`` | ``waiting`` | ``running`` | ``done`` | ``error`` | ``cancelled`` | ``not_run`` | ``declined`` |
``unknown`` | ``omitted``) and an accessible name with the tool's name and state; arguments and result are shown
as text (escaped, monospace; hostile HTML stays text), collapsed, with the result's size (open when the call did
not simply succeed); an ``unknown`` result (the instance running the call stopped answering) reads "unknown
outcome", never as done, and so does a call the ledger has dispatched and not answered when its attempt ended
(never "not sent"); while the call waits for approval it shows ``ui.approval_card`` (Run, Skip, Always
allow); a running call shows its progress and elapsed time (counted in the browser, no websocket traffic). The
card is updated only when its call changed. The card is one element: it also carries ``data-call-id`` and
``data-status`` (the same values), and ``_controls`` is the one place its buttons are made (issue 22's approvals
and questions go there).

A result's parts (``ToolCallState.parts``) show below its text: an image as a thumbnail (``/files/{sha}/thumb``) in a
link to the full size (``/files/{sha}``); audio as a player (``/files/{sha}``, nothing loaded before Play); an embedded
text resource collapsed, titled with its URI and type; a binary resource (or bytes that were not the image they claimed
to be) as a download chip (``/files/{sha}``, saved under the name the ledger holds: ``ui.download_names``); a resource
link as a chip showing the URI as text, never a link, never fetched; structured content as pretty JSON, collapsed.
Everything from the tool is text in labels (escaped): no HTML from a tool is ever rendered, and only the app's own
``/files/`` routes, by a hex sha256, are ever put in a ``src`` or ``href``.
"""

from __future__ import annotations

import json
import re
from typing import Any, assert_never

from nicegui import ui

from ledger.events import ToolPart
from ledger.state import ToolCallState
from ui.approval_card import Decide, approval_answer, approval_controls
from ui.download_names import tool_file_name
from ui.format import duration, size, tool_state_words
from ui.question_form import AnswerFn, show_questions
from ui.tool_descriptions import Describe
from ui.whole_text import show_whole

SHA256 = re.compile(r"^[0-9a-f]{64}$")

ICONS = {
    "writing": "edit_note",
    "queued": "schedule",
    "waiting": "pan_tool",
    "running": "sync",
    "done": "check_circle",
    "error": "error",
    "cancelled": "cancel",
    "not_run": "block",
    "declined": "do_not_disturb_on",
    "unknown": "help_outline",
    "omitted": "remove_circle_outline",
}


def card_status(call: ToolCallState, attempt_live: bool) -> str:
    if call.status is not None:
        return "done" if call.status == "ok" else call.status
    if not attempt_live:  # no result, its attempt over: dispatched, its outcome is not known; else never sent
        return "unknown" if call.phase == "running" else "omitted"
    return {"streaming": "writing", "ready": "queued", "waiting": "waiting", "running": "running"}[call.phase]


class ToolCard:
    def __init__(
        self, call: ToolCallState, decide: Decide, answer: AnswerFn | None = None, describe: Describe | None = None
    ) -> None:
        self.call_id = call.call_id
        self.decide = decide
        self.describe = describe  # the tool's description now (``ui.tool_descriptions``), shown while it waits
        self.answer = answer  # a tool's questions (``ui.question_form``), with what was typed so far
        self.drafts: dict[str, Any] = {}
        self._shown: tuple[object, ...] | None = None
        self.root = ui.column().classes("lc-tool-card w-full gap-1").mark("tool-card")
        self.root.props["data-tool-call"] = call.call_id
        self.root.props["data-call-id"] = call.call_id
        self.root.props["role"] = "group"

    def update(self, call: ToolCallState, attempt_live: bool) -> None:
        status = card_status(call, attempt_live)
        key = (call, status)
        if key == self._shown:
            return
        self._shown = key
        self.root.props["data-tool-status"] = status
        self.root.props["data-status"] = status
        self.root.props["aria-label"] = f"Tool call {call.name}: {tool_state_words(status)}"
        self.root.clear()
        with self.root:
            self._header(call, status)
            if status == "running" and call.progress is not None:
                value = call.progress / call.total if call.total else None
                if value is not None:
                    ui.linear_progress(value=min(max(value, 0.0), 1.0), show_value=False).props("rounded")
                if call.progress_message:
                    ui.label(call.progress_message).classes("lc-meta")
            self._controls(call, status)
            show_questions(call, status == "running", self.answer, self.drafts)
            if call.arguments and status != "waiting":  # a waiting call shows them whole, above its buttons
                with ui.expansion("Arguments").classes("lc-tool-part w-full").props("dense"):
                    ui.label(pretty(call.arguments)).classes("lc-mono").mark("tool-arguments")
            if call.status is not None:
                title = f"Result · {size(call.size)}"
                with ui.expansion(title).classes("lc-tool-part w-full").props("dense") as result:
                    ui.label(call.content or "(empty)").classes("lc-mono").mark("tool-result")
                    if call.whole is not None:  # over the bound: the preview above, the whole as a download
                        show_whole(call.content, call.whole)
                if call.status != "ok":
                    result.open()
                show_parts(call)

    def _controls(self, call: ToolCallState, status: str) -> None:
        """The card's approval part (``ui.approval_card``): the buttons while the call waits, else its answer."""
        if status == "waiting":
            approval_controls(call, self.decide, self.describe)
        else:
            approval_answer(call)

    def _header(self, call: ToolCallState, status: str) -> None:
        with ui.row().classes("items-center gap-2 w-full no-wrap"):
            ui.icon(ICONS[status], size="xs").classes(f"lc-tool-icon lc-tool-{status}")
            ui.label(call.name).classes("font-medium lc-mono-name")
            if call.server:
                ui.label(f"on {call.server}").classes("lc-meta")
            ui.space()
            ui.label(tool_state_words(status)).classes(f"lc-chip lc-tool-{status}").mark("tool-status")
            if call.duration_ms is not None:
                ui.label(duration(call.duration_ms)).classes("lc-meta")
            elif status == "running" and call.dispatched_ts:
                ui.label("").classes("lc-meta").props(f"data-lc-since={call.dispatched_ts}")


def pretty(arguments: str) -> str:
    """Arguments as indented JSON when they parse, else exactly as the model wrote them."""
    try:
        return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
    except ValueError:
        return arguments


def show_parts(call: ToolCallState) -> None:
    """The result's non-text parts and its structured content (see the module's guarantees)."""
    for part in call.parts:
        match part.kind:
            case "text":
                continue  # in the result's text already
            case "image":
                _image(part)
            case "audio":
                _audio(part)
            case "resource":
                _resource(part)
            case "resource_link":
                _link(part)
            case _:
                assert_never(part.kind)
    if call.structured is not None and not _wrapped_text(call.structured, call.content):
        with ui.expansion("Structured content").classes("lc-tool-part w-full").props("dense"):
            ui.label(pretty(call.structured)).classes("lc-mono").mark("tool-structured")


def _image(part: ToolPart) -> None:
    words = f"Image, {part.width}×{part.height}, {size(part.size)}"
    if part.sha256 is None or not SHA256.match(part.sha256):
        ui.label(f"{words}: not kept").classes("lc-meta").mark("tool-image-missing")
        return
    with ui.link(target=f"/files/{part.sha256}", new_tab=True).mark("tool-image-link") as link:
        link.props["aria-label"] = f"{words}: open full size"
        image = ui.element("img").mark("tool-image")
        image.props["src"] = f"/files/{part.sha256}/thumb"
        image.props["alt"] = words
        image.props["data-sha256"] = part.sha256
        image.style("max-width: 100%; max-height: 240px; border-radius: 6px")


def _audio(part: ToolPart) -> None:
    if part.sha256 is None or not SHA256.match(part.sha256):
        ui.label(f"Audio, {size(part.size)}: not kept").classes("lc-meta")
        return
    player = ui.element("audio").mark("tool-audio")
    player.props["controls"] = True
    player.props["preload"] = "none"
    player.props["src"] = f"/files/{part.sha256}"
    player.props["aria-label"] = f"Audio, {part.media_type or 'unknown type'}, {size(part.size)}"


def _resource(part: ToolPart) -> None:
    title = " · ".join(x for x in (part.uri or "Resource", part.media_type) if x)
    if part.text is not None:
        with ui.expansion(title).classes("lc-tool-part w-full").props("dense").mark("tool-resource") as box:
            box.props["data-uri"] = part.uri or ""
            ui.label(part.text or "(empty)").classes("lc-mono").mark("tool-resource-text")
        return
    with ui.row().classes("items-center gap-1 no-wrap").mark("tool-file") as row:
        ui.icon("attach_file", size="xs")
        if part.sha256 is None or not SHA256.match(part.sha256):
            ui.label(f"{title}: not kept").classes("lc-meta")
            return
        name = tool_file_name(part)
        chip = ui.link(f"{name} · {size(part.size)}", f"/files/{part.sha256}").classes("lc-chip")
        chip.props["download"] = name
        if part.name:
            ui.label(part.name).classes("lc-meta")
        row.props["data-sha256"] = part.sha256


def _link(part: ToolPart) -> None:
    with ui.row().classes("items-center gap-1 no-wrap").mark("tool-link") as row:
        row.props["data-uri"] = part.uri or ""
        ui.icon("link", size="xs")
        ui.label(part.uri or "").classes("lc-chip lc-mono break-words").tooltip("A link the tool gave: not opened")
        if part.name:
            ui.label(part.name).classes("lc-meta")


def _wrapped_text(structured: str, content: str) -> bool:
    """The SDK's wrapping of a plain text return (``{"result": text}``): nothing the text does not say."""
    try:
        value = json.loads(structured)
    except ValueError:
        return False
    return isinstance(value, dict) and list(value) == ["result"] and value["result"] == content
