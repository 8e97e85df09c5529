"""A tool card: one tool call inside an assistant message, from the model writing it to its one result.

Guarantees: the card's element carries ``data-tool-call`` (the call id) and ``data-tool-status`` (``writing`` |
``queued`` | ``waiting`` | ``running`` | ``done`` | ``error`` | ``cancelled`` | ``not_run`` | ``declined`` |
``unknown`` | ``omitted``) and an accessible name with the tool's name and state; arguments and result are shown
as text (escaped, monospace; hostile HTML stays text), collapsed, with the result's size (open when the call did
not simply succeed); an ``unknown`` result (the instance running the call stopped answering) reads "unknown
outcome", never as done; Run and Skip are buttons with those names while the call waits for approval; a running
call shows its progress and elapsed time (counted in the browser, no websocket traffic). The card is updated
only when its call changed.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from nicegui import ui

from ledger.state import ToolCallState
from ui.format import duration, size, tool_state_words

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
    if not attempt_live:
        return "omitted"
    return {"streaming": "writing", "ready": "queued", "waiting": "waiting", "running": "running"}[call.phase]


class ToolCard:
    def __init__(self, call: ToolCallState, decide: Callable[[str, bool], None]) -> None:
        self.call_id = call.call_id
        self.decide = decide
        self._shown: tuple[object, ...] | None = None
        self.root = ui.column().classes("lc-tool-card w-full gap-1").mark("tool-card")
        self.root.props["data-tool-call"] = call.call_id
        self.root.props["role"] = "group"

    def update(self, call: ToolCallState, attempt_live: bool) -> None:
        status = card_status(call, attempt_live)
        key = (call, status)
        if key == self._shown:
            return
        self._shown = key
        self.root.props["data-tool-status"] = status
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
            if status == "waiting":
                with ui.row().classes("gap-2"):
                    ui.button("Run", icon="play_arrow", on_click=lambda: self.decide(self.call_id, True)).props(
                        'no-caps dense unelevated aria-label="Run"'
                    ).mark("tool-run")
                    ui.button("Skip", icon="skip_next", on_click=lambda: self.decide(self.call_id, False)).props(
                        'no-caps dense flat aria-label="Skip"'
                    ).mark("tool-skip")
            if call.arguments:
                with ui.expansion("Arguments").classes("lc-tool-part w-full").props("dense"):
                    ui.label(pretty(call.arguments)).classes("lc-mono").mark("tool-arguments")
            if call.status is not None:
                title = f"Result · {size(call.size)}"
                with ui.expansion(title).classes("lc-tool-part w-full").props("dense") as result:
                    ui.label(call.content or "(empty)").classes("lc-mono").mark("tool-result")
                if call.status != "ok":
                    result.open()

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
