"""The audit panel: one timeline entry per phase of each attempt (never per chunk), live while streaming.

Guarantees: everything shown is ``ledger.folds.audit`` over the conversation's events; the timeline is rebuilt only
when a phase is added, otherwise only the live counters (chunks, stale chunks) change; the ledger is read and
audited in a worker thread (a long answer's 20,000 chunk events cost the event loop nothing), one read at a time,
the latest request winning; Export downloads the conversation's ledger as JSON Lines.
- Every read of the chat by an admin (``read_by``, team mode with ``--admin-can-read``) is listed first, by whom
  and when, so its owner always knows; then the chat's share links, each with when it was shared and with what,
  updated, revoked, and how many times it was opened (``ui.audit_shares``, from ``ConversationState.shares``).
- Each ended attempt has its waterfall and replay (``ui.waterfall``) under a closed expansion: folded
  (``ledger.folds.waterfall``) in a worker thread only when the expansion is first opened, then drawn; the timeline
  itself costs nothing more.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from nicegui import background_tasks, ui

from engine.commands import Engine
from ledger.codec import to_jsonl
from ledger.events import AnyEvent, ShareState
from ledger.folds import AttemptAudit, PhaseKind, Waterfall, audit, waterfalls
from ui.audit_shares import shares_card, shares_signature
from ui.audit_words import audit_counters, audit_heading, phase_detail, phase_label
from ui.export import conversation_markdown
from ui.format import clock, date_time
from ui.model_saw import model_saw
from ui.notices import notice
from ui.server_words import ICONS as SERVER_ICONS
from ui.waterfall import WaterfallView
from ui.widgets import TimeLabel

Reads = tuple[tuple[str, str], ...]  # (the admin's name, when): ``ConversationState.reads``
Shares = Mapping[str, ShareState]  # ``ConversationState.shares``
ICONS: dict[PhaseKind, str] = {
    "submitted": "send",
    "started": "play_arrow",
    "request_sent": "north_east",
    "first_chunk": "south_west",
    "chunks": "view_stream",
    "cancel_requested": "stop_circle",
    "upstream_closed": "link_off",
    "cancelled": "block",
    "failed": "error",
    "request_failed": "report",
    "retrying": "refresh",
    "done": "check_circle",
    "persisted": "save",
    "recovered": "restore",
    "step_started": "redo",
    "step_finished": "flag",
    "tool_call": "build",
    "tool_awaiting_approval": "pan_tool",
    "approval_asked": "pan_tool",
    "approval_given": "how_to_reg",
    "tool_dispatched": "play_circle",
    "tool_result": "task_alt",
    "stale_tool_result": "block",
    "question_asked": "help",
    "question_answered": "question_answer",
    "tool_server_used": SERVER_ICONS["tool_server_used"],
    "tool_server_gone": SERVER_ICONS["tool_server_gone"],
}


class AuditPanel:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.cid: str | None = None
        self.message_id: str | None = None
        self._signature: tuple[object, ...] = ()
        self._counters: dict[str, ui.label] = {}
        self._reading = False  # a read runs in a worker thread
        self._again = False  # asked for again meanwhile
        self._force = False
        with ui.column().classes("w-full gap-2").mark("audit-panel") as self.root:
            with ui.row().classes("items-center w-full justify-between"):
                ui.label("Audit").classes("text-lg font-medium")
                with ui.row().classes("gap-0"):
                    # tooltips without a fade: the drawer opens under the pointer on a phone, and a half-faded
                    # tooltip is text without contrast (and Quasar's grey is 4.4:1 under white: darker)
                    with (
                        ui.button("Export", icon="download", on_click=self.export)
                        .props('flat dense no-caps aria-label="Export"')
                        .mark("export")
                    ):
                        ui.tooltip("The ledger of this chat, as JSON Lines").props("transition-duration=0").style(
                            "background: #424242"
                        )
                    with (
                        ui.button("Markdown", icon="article", on_click=self.export_markdown)
                        .props('flat dense no-caps aria-label="Download as Markdown"')
                        .mark("export-markdown")
                    ):
                        ui.tooltip("This chat as shown, as Markdown").props("transition-duration=0").style(
                            "background: #424242"
                        )
            self.scope = ui.toggle(
                {"chat": "Whole chat", "message": "This answer"},
                value="chat",
                on_change=lambda _: self.refresh(force=True),
            ).props("dense no-caps")
            self.scope.set_visibility(False)
            self.timeline_box = ui.column().classes("w-full gap-0")

    def show(self, cid: str | None, message_id: str | None = None) -> None:
        self.cid, self.message_id = cid, message_id
        self.scope.set_visibility(message_id is not None)
        if message_id is not None:
            self.scope.value = "message"
        self.refresh(force=True)

    def refresh(self, force: bool = False) -> None:
        """Bring the timeline up to date (soon: the ledger is read off the event loop)."""
        self._force = self._force or force
        if self._reading:
            self._again = True
            return
        self._reading = True
        background_tasks.create(self._read(), name="audit panel")

    async def _read(self) -> None:
        try:
            while True:
                self._again = False
                cid = self.cid
                conv = self.engine.conversation(cid) if cid is not None else None
                if cid is None or conv is None:
                    self.timeline_box.clear()
                    self._signature = ()
                    return
                reads, shares = conv.reads, conv.shares  # (the reducer's folds of ``read_by`` and the shares')
                audits = await asyncio.to_thread(self._audits, cid)
                if self.timeline_box.is_deleted:
                    return
                if not self._again and cid == self.cid:
                    force, self._force = self._force, False
                    self._show(audits, reads, force, shares)
                if not self._again:
                    return
        finally:
            self._reading = False

    def _audits(self, cid: str) -> list[AttemptAudit]:
        return audit(self.engine.events(cid))

    def _show(self, audits: list[AttemptAudit], reads: Reads, force: bool, shares: Shares) -> None:
        if self.scope.value == "message" and self.message_id:
            audits = [a for a in audits if a.message_id == self.message_id]
        signature = (len(reads), shares_signature(shares), *((a.attempt_id, len(a.phases)) for a in audits))
        if force or signature != self._signature:
            self._signature = signature
            self._rebuild(audits, reads, shares)
        else:
            for a in audits:
                label = self._counters.get(a.attempt_id)
                if label is not None:
                    label.set_text(audit_counters(a))

    def _rebuild(self, audits: list[AttemptAudit], reads: Reads = (), shares: Shares | None = None) -> None:
        self.timeline_box.clear()
        self._counters = {}
        with self.timeline_box:
            if reads:
                with ui.card().classes("w-full lc-audit-card").props("flat bordered").mark("audit-reads"):
                    ui.label("Read by an admin").classes("font-medium")
                    for name, ts in reads:
                        with ui.row().classes("items-baseline gap-2"):
                            ui.icon("visibility", size="xs").classes("lc-phase-icon")
                            ui.label(f"Read by {name} on {date_time(ts)}").classes("text-sm").mark("audit-read")
            shares_card(shares or {})
            if not audits:
                ui.label("Nothing yet: send a message and its timeline appears here.").classes("lc-meta")
            for a in audits:
                with ui.card().classes("w-full lc-audit-card").props("flat bordered").mark("audit-attempt"):
                    ui.label(audit_heading(a)).classes("font-medium")
                    self._counters[a.attempt_id] = ui.label(audit_counters(a)).classes("lc-meta").mark("audit-counters")
                    with ui.column().classes("lc-timeline w-full gap-0").mark("audit-timeline"):
                        for phase in a.phases:
                            with ui.row().classes("lc-phase items-start no-wrap gap-2 w-full"):
                                ui.icon(ICONS[phase.kind], size="xs").classes("lc-phase-icon")
                                with ui.column().classes("gap-0 min-w-0"):  # long error lines wrap, never cut
                                    with ui.row().classes("items-baseline gap-2"):
                                        ui.label(phase_label(phase)).classes("font-medium text-sm")
                                        TimeLabel(clock(phase.ts, millis=True)).classes("font-mono")
                                    detail = phase_detail(phase)
                                    if detail:
                                        ui.label(detail).classes("lc-meta break-words")
                    if a.status != "streaming" and self.cid is not None:
                        self._waterfall(self.cid, a.attempt_id)
                        model_saw(self.engine, self.cid, a.attempt_id)  # the exact messages of each request

    def _waterfall(self, cid: str, attempt_id: str) -> None:
        """The attempt's waterfall and replay, folded and drawn when its expansion is first opened."""
        box = (
            ui.expansion("Waterfall and replay", icon="waterfall_chart")
            .classes("w-full")
            .mark("waterfall-open")
            .props('data-testid="waterfall-open"')
        )

        async def draw() -> None:
            wf = await asyncio.to_thread(self._fold_waterfall, cid, attempt_id)
            if box.is_deleted or list(box.default_slot.children):
                return
            with box:
                if wf is None:
                    ui.label("No waterfall: this attempt has no recorded end.").classes("lc-meta")
                else:
                    WaterfallView(wf)

        def opened(event: object) -> None:
            if box.value and not list(box.default_slot.children):
                background_tasks.create(draw(), name="waterfall")

        box.on_value_change(opened)

    def _fold_waterfall(self, cid: str, attempt_id: str) -> Waterfall | None:
        mine: list[AnyEvent] = [
            e for e in self.engine.events(cid) if getattr(e, "attempt_id", attempt_id) == attempt_id
        ]
        found = waterfalls(mine, self.engine.settings.limits.idle_timeout)
        return found[0] if found else None

    def export(self) -> None:
        if self.cid is None:
            notice("Open a conversation to export its ledger.")
            return
        content = "".join(to_jsonl(self.engine.events(self.cid))).encode("utf-8")
        ui.download.content(content, f"ledger-{self.cid}.jsonl", media_type="application/x-ndjson")

    def export_markdown(self) -> None:
        conv = self.engine.conversation(self.cid) if self.cid else None
        if conv is None:
            notice("Open a conversation to export it.")
            return
        content = conversation_markdown(conv).encode("utf-8", "replace")
        ui.download.content(content, f"chat-{conv.conversation_id}.md", media_type="text/markdown")
