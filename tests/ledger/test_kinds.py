"""Every event kind carries its own flags, and every run-time list of kinds is made from them (issue 33, item 3):
the lists equal the hand-written ones they replaced, so nothing changed silently, and a kind without flags fails."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pytest

from ledger import ends
from ledger.events.core import EVENT_CLASSES, Event, Flags
from ledger.events.kinds import flagged
from ledger.folds.audit_phases import LATE_PHASES
from store.api import FLUSH_AT_ONCE_KINDS
from ui.refresh import FLUSH_NOW, LIST_KINDS

#: The lists as they were written by hand before the flags (742ef59).
BEFORE = {
    "attempt": {
        "started", "request_sent", "chunk", "stale_chunk", "cancel_requested", "upstream_closed", "cancelled",
        "failed", "done", "persisted", "recovered", "step_started", "step_finished", "tool_call_started",
        "tool_call", "tool_awaiting_approval", "approval_asked", "approval_given", "tool_dispatched",
        "tool_progress", "tool_result", "stale_tool_result", "question_asked", "question_answered",
    },
    "urgent": {
        "cancelled", "done", "persisted", "deleted", "recovered", "submitted", "created", "renamed", "selected",
        "version_selected", "branched", "tool_call", "tool_dispatched", "tool_result",
    },
    "prompt": {
        "submitted", "started", "cancel_requested", "cancelled", "failed", "done", "persisted", "selected",
        "recovered", "retrying", "deleted", "step_started", "tool_call_started", "tool_call",
        "tool_awaiting_approval", "approval_asked", "approval_given", "grant_revoked", "tool_dispatched",
        "tool_result", "question_asked", "question_answered", "titled",
    },
    "listed": {"created", "renamed", "titled", "deleted", "submitted", "started", "persisted"},
    "late_phase": {
        "started", "request_sent", "cancel_requested", "upstream_closed", "cancelled", "recovered", "done",
        "persisted", "step_started", "step_finished", "tool_call", "tool_awaiting_approval", "approval_asked",
        "approval_given", "tool_dispatched", "tool_result", "question_asked", "question_answered",
    },
}  # fmt: skip


#: The kinds there were then: a kind added later declares its own flags and is not compared with these lists.
KINDS_THEN = {
    "created", "renamed", "submitted", "started", "request_sent", "chunk", "stale_chunk", "cancel_requested",
    "upstream_closed", "cancelled", "failed", "retrying", "done", "persisted", "selected", "version_selected",
    "branched", "recovered", "detached", "attached", "deleted", "step_started", "step_finished", "tool_call_started",
    "tool_call", "tool_awaiting_approval", "tool_dispatched", "tool_progress", "tool_result", "stale_tool_result",
    "approval_asked", "approval_given", "grant_revoked", "question_asked", "question_answered", "message_queued",
    "queued_edited", "queued_removed", "titled",
}  # fmt: skip


def lacking_flags(classes: tuple[type[Event], ...]) -> list[str]:
    """The kinds whose class does not declare ``FLAGS`` itself (an inherited or missing one does not count)."""
    return [cls.KIND or cls.__name__ for cls in classes if not isinstance(cls.__dict__.get("FLAGS"), Flags)]


def test_every_event_class_declares_its_own_flags() -> None:
    assert lacking_flags(EVENT_CLASSES) == []


def test_a_kind_without_flags_is_found() -> None:
    @dataclass(frozen=True, kw_only=True, slots=True)
    class MadeUp(Event):
        KIND: ClassVar[str] = "made_up"

    assert lacking_flags((*EVENT_CLASSES, MadeUp)) == ["made_up"]
    with pytest.raises(AttributeError):
        flagged("attempt", (MadeUp,))


@pytest.mark.parametrize("flag", list(BEFORE))
def test_each_list_made_from_the_flags_equals_the_hand_written_one_it_replaced(flag: str) -> None:
    assert {cls.KIND for cls in EVENT_CLASSES} >= KINDS_THEN
    assert flagged(flag) & KINDS_THEN == BEFORE[flag]


def test_the_lists_the_store_the_page_the_audit_and_the_one_end_rule_use_are_the_flagged_ones() -> None:
    assert flagged("attempt") == ends.ATTEMPT_KINDS
    assert flagged("urgent") == FLUSH_AT_ONCE_KINDS
    assert flagged("prompt") == FLUSH_NOW
    assert flagged("listed") == LIST_KINDS
    assert {kind: kind for kind in flagged("late_phase")} == LATE_PHASES
