"""The attempt's side of a tool's question: recorded in the ledger, waited for, answered once.

Guarantees:
- ``asker(run, call_id)`` is what a tool call is given to ask with: each question is recorded as
  ``question_asked`` (with a new ``question_id``, the requested schema or URL and the negotiated revision) and
  waits for its answer (a ``sign_in`` question is answered as its ``done`` future says when it resolves: the
  sign-in came back, signed in or refused); nothing is asked once the attempt's claim was lost (the answer is
  then ``cancel``).
- ``answer`` is the person's answer: the first one wins (later ones return False and record nothing); a form's
  content is checked against the requested schema first (``engine.tools.asking.check_answer``: invalid content
  raises ``ValueError`` with the reasons and is never sent); ``question_answered`` is recorded before the tool
  is told.
- ``stop_questions`` answers every question of a call still waiting ``cancel`` (``by`` ``stop``) before the call
  is cancelled; a waiting ask whose task is cancelled records the same. ``answer_at_restart`` records the answer a
  restart gives the question a dead process left waiting (``cancel``, ``by`` ``restart``).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from engine.stamps import attempt_ids, new_id
from engine.tools import Action, Ask, PendingQuestion, Question, QuestionAnswer, check_answer, content_json
from engine.turns.attempt import Append, AttemptRun
from ledger.events import QuestionAnswered, QuestionAsked, pending_question
from ledger.state import AttemptState

RESTARTED = "Not run: the app stopped while the tool waited for an answer to its question (answered: cancel)."


def asker(run: AttemptRun, call_id: str) -> Ask:
    async def ask(question: Question) -> QuestionAnswer:
        if run.lost:
            return QuestionAnswer("cancel", by="stop")
        qid = new_id("q")
        requested = json.dumps(question.schema, ensure_ascii=False) if question.mode == "form" else question.url
        run.append(
            QuestionAsked(
                **run.ids,
                call_id=call_id,
                question_id=qid,
                mode=question.mode,
                message=question.message,
                requested=requested,
                revision=question.revision,
            )
        )
        future: asyncio.Future[QuestionAnswer] = asyncio.get_running_loop().create_future()
        run.questions[qid] = PendingQuestion(call_id, question, future)
        try:
            if question.done is not None:  # a sign-in: the callback route answers it (accept, by the person)
                waiting: set[asyncio.Future[Any]] = {future, question.done}
                await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if not future.done():
                    _close(run, qid, QuestionAnswer(question.done.result(), by="user"))
            return await future
        except asyncio.CancelledError:
            _close(run, qid, QuestionAnswer("cancel", by="stop"))
            raise
        finally:
            run.questions.pop(qid, None)

    return ask


def answer_question(run: AttemptRun, question_id: str, action: Action, content: dict[str, Any] | None = None) -> bool:
    """The person's answer (see the module's guarantees); False when that question no longer waits."""
    pending = run.questions.get(question_id)
    if pending is None or pending.future.done():
        return False
    if action == "accept" and pending.question.mode == "sign_in":
        raise ValueError("A sign-in is answered by signing in: open the link; Cancel gives up.")
    if action == "accept" and pending.question.mode == "form":
        content, errors = check_answer(pending.question.schema, content or {})
        if errors:
            raise ValueError(" ".join(errors.values()))
    else:
        content = None
    return _close(run, question_id, QuestionAnswer(action, content, "user"))


def stop_questions(run: AttemptRun, call_id: str) -> bool:
    """Answer ``cancel`` (by ``stop``) every question of the call still waiting; whether there was one."""
    waiting = [qid for qid, p in run.questions.items() if p.call_id == call_id and not p.future.done()]
    for qid in waiting:
        _close(run, qid, QuestionAnswer("cancel", by="stop"))
    return bool(waiting)


def answer_at_restart(attempt: AttemptState, cid: str, call_id: str, append: Append) -> bool:
    """Append the ``cancel`` answer (by ``restart``) of the question a dead process left the call waiting on."""
    call = attempt.tool_calls[call_id]
    question = pending_question(call.questions) if not call.answered else None
    if question is None:
        return False
    ids = attempt_ids(cid, attempt.attempt_id)
    append(QuestionAnswered(**ids, call_id=call_id, question_id=question.question_id, action="cancel", by="restart"))
    return True


def decline_unasked(run: AttemptRun, question_id: str, reason: str) -> bool:
    """Decline a question nobody can be asked (``by`` app, ``reason`` in the ledger); False when it no longer waits."""
    return _close(run, question_id, QuestionAnswer("decline", None, "app", reason))


def _close(run: AttemptRun, question_id: str, given: QuestionAnswer) -> bool:
    pending = run.questions.get(question_id)
    if pending is None or pending.future.done():
        return False
    run.append(
        QuestionAnswered(
            **run.ids,
            call_id=pending.call_id,
            question_id=question_id,
            action=given.action,
            content=content_json(given.content),
            by=given.by,
            reason=given.reason,
        )
    )
    pending.future.set_result(given)
    return True
