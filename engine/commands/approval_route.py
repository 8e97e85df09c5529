"""Where a person's answer goes, for a call waiting for approval (``route_answer``) or a tool's question
(``route_reply``): to the attempt running here, or, when another instance on the same database runs it, to that
owner (``engine.attempts.peers.Peers.answer`` / ``reply``).

Guarantees: an answer reaches at most one waiting call or question; here, the first answer wins and a later one
raises ``InputRejected`` (the page drops a late approval quietly: the card shows the first answer); a form's values
that do not fit its schema raise ``ValueError`` here (``engine.turns.questions.answer_question``) and are never sent; an
answer for an attempt another instance runs is sent to it in the background and applied there under the same rules;
with no attempt running anywhere, ``InputRejected`` says it no longer waits.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any

from engine.attempts import Peers
from engine.tools import Action, check_answer
from engine.turns import AttemptRun, AttemptWorker, answer_question, decline_unasked
from ledger.decide import InputRejected
from ledger.events import ApprovalScope
from ledger.state import ConversationState

NO_LONGER = "That tool call is no longer waiting for a decision."
GONE = "That question was answered already, or no longer waits for an answer."
Reply = tuple[str, Action, dict[str, Any] | None]  # (question id, accept | decline | cancel, a form's values)


def route_answer(
    worker: AttemptWorker | None,
    peers: Peers,
    spawn: Callable[[Coroutine[Any, Any, None], str], object],
    cid: str,
    answer: tuple[str, bool, ApprovalScope],
) -> None:
    call_id, run_it, scope = answer
    if worker is not None:
        if not worker.decide_tool(call_id, run_it, scope):
            raise InputRejected(NO_LONGER)
        return
    elsewhere = peers.streaming(cid)
    if elsewhere is None:
        raise InputRejected(NO_LONGER)
    spawn(peers.answer(cid, elsewhere, call_id, run_it, scope), "an approval for the attempt's owner")


def route_reply(
    run: AttemptRun | None,
    peers: Peers,
    spawn: Callable[[Coroutine[Any, Any, None], str], object],
    cid: str,
    reply: Reply,
    conv: ConversationState | None,
) -> None:
    """``conv``: this instance's view of the conversation (a form's values are checked against its schema here
    before they are sent to another instance)."""
    question_id, action, content = reply
    if run is not None:
        if not answer_question(run, question_id, action, content):
            raise InputRejected(GONE)
        return
    elsewhere = peers.streaming(cid)
    live = conv.live_attempt() if conv is not None else None
    asked = [q for c in live.tool_calls.values() for q in c.questions if q.question_id == question_id] if live else []
    if elsewhere is None or not asked or asked[0].answered:
        raise InputRejected(GONE)
    if action == "accept" and asked[0].mode == "form":
        content, errors = check_answer(json.loads(asked[0].requested), content or {})
        if errors:
            raise ValueError(" ".join(errors.values()))
    spawn(peers.reply(cid, elsewhere, question_id, action, content), "an answer to a question for the attempt's owner")


def decline_here(run: AttemptRun | None, question_id: str, reason: str) -> None:
    """Decline, with ``reason``, a question of an attempt running here that nobody can be asked."""
    if run is None or not decline_unasked(run, question_id, reason):
        raise InputRejected(GONE)
