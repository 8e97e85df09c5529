"""The one result each open tool call of a dead process's attempt gets at start-up, before the attempt is ended
(``engine.turns.worker.recover``).

Guarantees: every complete call without a result gets exactly one (a half-written one, still streaming its
arguments, is omitted, as a Stop omits it): a call that was running is ``unknown`` (``ledger.ends.UNKNOWN_OUTCOME``:
what the restart knows of its outcome is nothing, said so, never a claimed cancel); one that waited for a person
has its question answered ``cancel`` or its approval answered Skip, by ``restart``, and is ``not_run``; one not
dispatched yet is ``not_run``.
"""

from __future__ import annotations

from engine.stamps import attempt_ids
from engine.turns.attempt import Append
from engine.turns.questions import RESTARTED, answer_at_restart
from ledger.ends import UNKNOWN_OUTCOME
from ledger.events import ApprovalGiven, ToolResult, ToolStatus
from ledger.state import AttemptState

NOT_RUN_RESTART = "Not run: the app stopped before this call was dispatched."


def answer_open_calls(attempt: AttemptState, append: Append, cid: str) -> None:
    """Every complete tool call of a dead process's attempt gets its one result (a half-written one is omitted)."""
    for call in attempt.tool_calls.values():
        if call.answered or call.phase == "streaming":
            continue
        asked = answer_at_restart(attempt, cid, call.call_id, append)  # it waited for a person: not run
        running = call.phase == "running" and not asked  # what is known of its outcome then: nothing
        status: ToolStatus = "unknown" if running else "not_run"
        content = UNKNOWN_OUTCOME if running else RESTARTED if asked else NOT_RUN_RESTART
        ids = attempt_ids(cid, attempt.attempt_id)
        if call.phase == "waiting" and (wait := call.asked) is not None:  # the wait is answered Skip, by the restart
            append(ApprovalGiven(**ids, call_id=call.call_id, server=wait.server, tool=wait.tool, decision="skip",
                                 by="restart", grant_hash=wait.grant_hash))  # fmt: skip
        append(ToolResult(**ids, call_id=call.call_id, status=status, content=content, size=len(content)))
