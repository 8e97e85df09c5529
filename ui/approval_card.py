"""The approval part of a tool card: what a waiting call will do, why it asks, how long it has waited, and the
person's answer; once answered, who answered and how far it reaches.

Guarantees: a projection of ``ToolCallState.asked`` / ``.approval`` (folded from the ledger), so a reload, a second
tab and another instance show the same card; the call's **full** arguments are shown before Run (pretty JSON, one
row per top-level field; a value longer than ``LONG`` characters is collapsed under its name and size, whole
inside), as text (escaped); the buttons are Run, Skip, "Always allow <tool> in this chat" and "Always allow <tool>
on this server", each with an accessible name; the time waited is counted in the browser (``data-lc-since``). The
tool's description, exactly as the model receives it, is shown as text (collapsed, ``ui.tool_descriptions``);
when the call asks because the tool changed since the person allowed it (a void grant), it is marked changed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from nicegui import ui

from ledger.events import ApprovalScope
from ledger.state import ToolCallState
from ui.approval_words import BY_WORDS, MODE_WORDS, SCOPE_WORDS, why_words
from ui.tool_descriptions import Describe, description_box

Decide = Callable[[str, bool, ApprovalScope], None]
LONG = 160
VOID = frozenset(("chat_grant_void", "server_grant_void"))  # it asks because the tool changed since its grant


def approval_controls(call: ToolCallState, decide: Decide, describe: Describe | None = None) -> None:
    """The waiting call's tool description, arguments, reason, time waited and buttons."""
    asked = call.asked
    with ui.column().classes("lc-approval gap-1 w-full").mark("tool-approval"):
        with ui.row().classes("items-center gap-2"):
            ui.label("Waiting for your approval").classes("text-sm")
            if asked is not None and asked.ts:
                ui.label("").classes("lc-meta").props(f"data-lc-since={asked.ts}").mark("tool-waited")
        if asked is not None:
            reason = f"{MODE_WORDS.get(asked.mode, asked.mode).capitalize()}: {why_words(asked.why)}."
            ui.label(reason).classes("lc-meta").mark("tool-approval-why")
            described = describe(asked.server, asked.tool) if describe is not None else None
            if described is not None:
                title = f"What the model is told about {asked.tool}"
                description_box(asked.tool, described.description, changed=asked.why in VOID, title=title)
        show_arguments(call.arguments)
        name = call.name
        with ui.row().classes("gap-2 items-center"):
            _button("Run", "play_arrow", "tool-run", lambda: decide(call.call_id, True, "once"), primary=True)
            _button("Skip", "skip_next", "tool-skip", lambda: decide(call.call_id, False, "once"))
            _button(f"Always allow {name} in this chat", "done_all", "tool-allow-chat",
                    lambda: decide(call.call_id, True, "chat"))  # fmt: skip
            _button(f"Always allow {name} on this server", "verified_user", "tool-allow-server",
                    lambda: decide(call.call_id, True, "server"))  # fmt: skip


def approval_answer(call: ToolCallState) -> None:
    """One line saying how the call's approval was answered (nothing when the policy simply let it run)."""
    given = call.approval
    if given is None:
        return
    if given.by == "grant":
        words = f"Ran without asking: you allowed it {SCOPE_WORDS.get(given.scope, given.scope)}"
    elif given.by == "policy":
        words = "Not run: the approval policy forbids this tool"
    else:
        decision = "Run" if given.decision == "run" else "Skipped"
        reach = f", {SCOPE_WORDS.get(given.scope, given.scope)}" if given.decision == "run" else ""
        words = f"{decision}{reach} {BY_WORDS.get(given.by, given.by)}"
    ui.label(words).classes("lc-meta").mark("tool-approval-answer")


def show_arguments(arguments: str) -> None:
    """Every argument, whole: short values as rows, long ones collapsed under their name (see the guarantees)."""
    try:
        value: Any = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        value = None
    with ui.column().classes("lc-approval-args gap-0 w-full").mark("tool-approval-arguments"):
        if not isinstance(value, dict):
            ui.label(arguments or "(no arguments)").classes("lc-mono break-words")
            return
        if not value:
            ui.label("(no arguments)").classes("lc-meta")
        for key, item in value.items():
            text = item if isinstance(item, str) else json.dumps(item, indent=2, ensure_ascii=False)
            if len(text) <= LONG:
                with ui.row().classes("gap-2 no-wrap items-start w-full") as row:
                    ui.label(f"{key}:").classes("lc-mono font-medium")
                    ui.label(json.dumps(item, ensure_ascii=False)).classes("lc-mono break-words")
                row.props["data-argument"] = key
                continue
            title = f"{key} · {len(text):,} characters"
            with ui.expansion(title).classes("lc-tool-part w-full").props("dense").mark("tool-long-argument") as box:
                box.props["data-argument"] = key
                ui.label(text).classes("lc-mono break-words")


def _button(text: str, icon: str, mark: str, on_click: Callable[[], None], *, primary: bool = False) -> None:
    style = "unelevated" if primary else "flat"
    button = ui.button(text, icon=icon, on_click=on_click).props(f"no-caps dense {style}").mark(mark)
    button.props["aria-label"] = text
