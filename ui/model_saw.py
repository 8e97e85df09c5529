"""The audit panel's "What the model saw": every request of an attempt with the exact messages it sent.

Guarantees: built from the ledger (``engine.provider.request_view``) in a worker thread only when its expansion is first
opened (the timeline costs nothing more); each request shows its step, parameters (never a secret) and the
agent preset version, then its messages in order: role, text as sent (shown as text, never rendered; a very
long one is cut on the page with a note, the export has it whole), files and binary tool parts as references
(name, type, size, sha256), tool calls with their arguments and tool messages with their call id.
"""

from __future__ import annotations

import asyncio

from nicegui import background_tasks, ui

from engine.commands import Engine
from engine.provider import SentRequest, requests_seen
from ui.format import model_label

SHOWN_CHARS = 4_000


def model_saw(engine: Engine, cid: str, attempt_id: str) -> None:
    """An expansion under an attempt's audit card, filled when first opened."""
    box = ui.expansion("What the model saw", icon="visibility").classes("w-full").mark("model-saw-open")

    def read() -> list[SentRequest]:
        def told(preset_id: str, version: int) -> str | None:
            preset = engine.presets.get(preset_id, version)
            return preset.instructions if preset is not None else None

        limit = engine.settings.limits.tool_result_chars
        return requests_seen(engine.events(cid), attempt_id, told, limit)

    async def draw() -> None:
        requests = await asyncio.to_thread(read)
        if box.is_deleted or list(box.default_slot.children):
            return
        with box:
            if not requests:
                ui.label("No request was sent for this attempt.").classes("lc-meta")
            for number, request in enumerate(requests, start=1):
                _request(number, request)

    def opened(event: object) -> None:
        if box.value and not list(box.default_slot.children):
            background_tasks.create(draw(), name="what the model saw")

    box.on_value_change(opened)


def _request(number: int, request: SentRequest) -> None:
    with ui.column().classes("w-full gap-1").mark("model-saw-request"):
        params = ", ".join(f"{p.name}={p.value}" for p in request.params if p.name != "stream")
        title = f"Request {number} · step {request.step} · {model_label(request.model)}"
        ui.label(title).classes("font-medium text-sm")
        if params:
            ui.label(params).classes("lc-meta font-mono break-words")
        if request.preset is not None:
            preset_id, version = request.preset
            note = " (its instructions are not stored here)" if request.instructions_missing else ""
            ui.label(f"Preset {preset_id}, version {version}{note}").classes("lc-meta")
        for message in request.messages:
            with ui.column().classes("w-full gap-0 lc-audit-card").mark("model-saw-message"):
                head = message.role + (f" · answers {message.tool_call_id}" if message.tool_call_id else "")
                ui.label(head).classes("text-sm font-medium")
                text = message.text
                if len(text) > SHOWN_CHARS:
                    text = f"{text[:SHOWN_CHARS]}\n[… {len(text) - SHOWN_CHARS:,} more characters, whole in the export]"
                if text:
                    ui.label(text).classes("whitespace-pre-wrap break-words text-sm")
                for call in message.tool_calls:
                    ui.label(f"calls {call}").classes("lc-meta font-mono break-words")
                for reference in message.references:
                    ui.label(f"file {reference}").classes("lc-meta font-mono break-words")
