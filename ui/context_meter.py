"""The context meter near the message box: how much of the model's input window the next request takes, and
the Compact button.

Guarantees: it reads the engine's meter (``engine.commands.compacting``: litellm's count of the history as it would be
sent, files included, against the window litellm or ``--model-info`` gives) when the chat, the model picked or the
ledger changed and nothing streams (after each answer, after a switch of model or chat), never per chunk; a reading
that a newer one overtook is dropped. It shows "used / window tokens (n%)", marked as a warning from 80% and
saying the next message summarizes earlier turns first once it is over; a window litellm does not know shows the
count only. Compact (accessible name "Compact: summarize earlier turns") asks the engine for a compaction; a
refusal is a notice. Hidden for a new chat. Marked ``context-meter`` (``data-used``, ``data-window``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from nicegui import background_tasks, ui

from engine.commands import Engine, InputRejected
from engine.provider import Meter
from ledger.state import ConversationState
from ui.notices import notice

log = logging.getLogger("ledger_chat.ui")


def meter_text(meter: Meter) -> str:
    if meter.window is None:
        return f"{meter.used:,} tokens in context (window unknown)"
    text = f"{meter.used:,} / {meter.window:,} tokens ({round(100 * (meter.ratio or 0))}%)"
    if meter.over:
        return f"{text}: the next message summarizes earlier turns first"
    return f"{text}: nearly full" if meter.warn else text


class ContextMeter:
    def __init__(
        self, engine: Engine, cid: Callable[[], str | None], model: Callable[[], str], told: Callable[[], str]
    ) -> None:
        """``told``: the instructions of the agent preset the next answer uses ("" without one)."""
        self.engine, self.cid, self.model, self.told = engine, cid, model, told
        self._key: object = None
        with ui.row().classes("w-full mx-auto items-center gap-2 lc-meta lc-meter") as self.root:
            self.root.mark("context-meter")
            self.bar = ui.html('<span style="width:0%"></span>', sanitize=False).classes("lc-meter-bar")
            self.bar.props('aria-hidden="true"')
            self.label = ui.label("").mark("context-meter-label")
            ui.button("Compact", icon="compress", on_click=self.compact).props(
                'flat dense no-caps size=sm aria-label="Compact: summarize earlier turns" '
                'title="Summarize the earlier turns now; the newest turns are kept whole"'
            ).mark("compact")
        self.root.set_visibility(False)

    def show(self, conv: ConversationState | None) -> None:
        """Bring the reading up to date with the chat shown (a new reading only when something changed)."""
        cid = self.cid()
        if cid is None or conv is None or not conv.message_ids:
            self._key = None
            self.root.set_visibility(False)
            return
        if conv.live_attempt() is not None:
            return  # the reading of the last request stays while an answer streams
        key = (cid, self.model(), self.told(), conv.last_seq)
        if key != self._key:
            self._key = key
            background_tasks.create(self._measure(key, cid), name="context meter")

    def model_changed(self) -> None:
        self._key = None
        self.show(self.engine.conversation(self.cid() or "") if self.cid() else None)

    async def _measure(self, key: object, cid: str) -> None:
        try:
            meter = await self.engine.meter(cid, self.model(), self.told())
        except InputRejected:
            return
        except Exception:  # noqa: BLE001 - a reading that fails must never break the page
            log.exception("the context meter could not count")
            return
        if key != self._key or self.root.is_deleted:
            return
        with self.root:
            self._render(meter)

    def _render(self, meter: Meter) -> None:
        self.root.set_visibility(True)
        self.label.set_text(meter_text(meter))
        self.root.props["data-used"] = str(meter.used)
        self.root.props["data-window"] = str(meter.window or "")
        width = min(100, round(100 * (meter.ratio or 0)))
        self.bar.set_content(f'<span style="width:{width}%"></span>')
        self.bar.set_visibility(meter.window is not None)
        if meter.warn:
            self.root.classes(add="lc-meter-warn")
        else:
            self.root.classes(remove="lc-meter-warn")

    async def compact(self) -> None:
        cid = self.cid()
        if cid is None:
            return
        try:
            await self.engine.compact(cid, self.model())
        except InputRejected as exc:
            notice(str(exc), "warning")
