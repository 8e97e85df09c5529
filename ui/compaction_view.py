"""A compaction in the transcript: a divider after the last turn it summarizes, never in place of a message.

Guarantees: the screen keeps every message; a compaction (``ledger.compaction``) shows as one divider placed after the
turn its summary reaches (``with_dividers``: only on the path shown, the newest last), reading "Summarizing earlier
turns…" while it streams (the composer's Stop stops it), "Earlier turns summarized" with the summary in an expansion
once it completed (rendered as answers are: ``ui.markdown``), or why it changed nothing (stopped, failed: the
provider's sentence) with Retry. Its Audit button opens its own entry in the audit panel. Every button has an
accessible name; the divider is ``role=separator`` with a label, marked ``compaction-divider`` with ``data-status``.
"""

from __future__ import annotations

from nicegui import ui

from ledger.compaction import compaction_ids
from ledger.state import AttemptState, ConversationState
from ui.answer_status import DOM_STATUS
from ui.markdown import MarkdownStream
from ui.widgets import Actions

DONE = "Earlier turns summarized"
RUNNING = "Summarizing earlier turns…"
STOPPED = "Summary stopped: the earlier turns are sent as they were"
FAILED = "Summary failed: the earlier turns are sent as they were"


def with_dividers(conv: ConversationState, path: tuple[str, ...]) -> tuple[str, ...]:
    """The path shown with each compaction of it after the message its summary reaches."""
    after: dict[str, list[str]] = {}
    for message_id in compaction_ids(conv):
        key = conv.messages[message_id].parent or ""
        attempt = conv.attempts.get(key)
        anchor = attempt.message_id if attempt is not None else key
        if anchor in conv.messages and (attempt is None or conv.messages[anchor].selected_attempt_id == key):
            after.setdefault(anchor, []).append(message_id)
    if not after:
        return path
    shown: list[str] = []
    for message_id in path:
        shown.append(message_id)
        shown += after.get(message_id, ())
    return tuple(shown)


class CompactionView:
    def __init__(self, message_id: str, actions: Actions) -> None:
        self.message_id, self.actions = message_id, actions
        self._key: object = None
        with ui.column().classes("w-full gap-1 lc-compaction").mark("compaction-divider") as self.root:
            self.root.props(f'role=separator aria-label="{DONE}"')
            self.row = ui.row().classes("w-full items-center gap-2 lc-meta no-wrap")
            self.body = ui.column().classes("w-full gap-1")

    def update(self, conv: ConversationState) -> None:
        message = conv.messages[self.message_id]
        attempt = conv.attempts.get(message.selected_attempt_id or "")
        if attempt is None:
            return
        key = (attempt.attempt_id, attempt.status, attempt.error_summary, attempt.text if not attempt.is_live else "")
        if key == self._key:
            return
        self._key = key
        self.root.props["data-status"] = DOM_STATUS[attempt.status]
        self.root.props["aria-label"] = self._title(attempt)
        self.row.clear()
        self.body.clear()
        with self.row:
            ui.element("hr").classes("lc-compaction-rule")
            ui.icon("compress", size="xs")
            ui.label(self._title(attempt)).classes("lc-compaction-title").mark("compaction-title")
            ui.element("hr").classes("lc-compaction-rule")
        with self.body:
            if attempt.status == "complete":
                with ui.expansion("Summary", icon="notes").props("dense").classes("w-full").mark("compaction-summary"):
                    MarkdownStream().mark("compaction-text").show(attempt.text, final=True)  # rendered, as answers
            elif attempt.status == "failed" and attempt.error_summary:
                ui.label(attempt.error_summary).classes("lc-error break-words").mark("compaction-error")
            if not attempt.is_live:
                self._buttons(attempt)

    def _buttons(self, attempt: AttemptState) -> None:
        with ui.row().classes("items-center gap-1 lc-meta"):
            ui.button(icon="timeline", on_click=lambda: self.actions.audit(self.message_id)).props(
                'flat dense round size=sm aria-label="Audit" title="Show this summary in the audit panel"'
            ).mark("compaction-audit")
            retry = self.actions.retry_summary
            if attempt.status != "complete" and retry is not None:
                ui.button("Retry", icon="refresh", on_click=lambda: retry(self.message_id)).props(
                    'flat dense no-caps aria-label="Retry the summary" title="Summarize the earlier turns again"'
                ).mark("compaction-retry")

    @staticmethod
    def _title(attempt: AttemptState) -> str:
        if attempt.is_live:
            return RUNNING
        if attempt.status == "complete":
            return DONE
        return FAILED if attempt.status == "failed" else STOPPED
