"""Questions a tool asks while it runs (MCP elicitation), as ledger events and as the state a call carries.

Guarantees:
- ``question_asked`` records one question of a running tool call: its ``question_id`` (made by the engine), the
  mode (``form``: a JSON schema of typed fields; ``url``: a link the person opens themselves; ``sign_in``: the
  app's own question, the OAuth sign-in to a remote tool server the call needs), the server's message, the
  requested schema as JSON text (form) or the URL (url; sign_in: the authorization URL, never a token), and the
  MCP protocol revision the server negotiated (``2025-11-25``: an ``elicitation/create`` request;
  ``2026-07-28``: an ``input_required`` result).
- ``question_answered`` records its one answer: ``accept`` (with the content as JSON text for a form),
  ``decline`` or ``cancel``, and who answered (``user``; ``stop``: the turn was stopped while it waited;
  ``restart``: the app stopped while it waited). The first answer wins: a second one changes nothing.
- Pure values (``ledger.events.values.Event``); ``QuestionState`` is the frozen projection a ``ToolCallState`` carries,
  in the order the questions were asked; ``pending`` is the one still waiting, if any.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal, NamedTuple

from ledger.events.values import Event, Flags

QuestionMode = Literal["form", "url", "sign_in"]
QuestionAction = Literal["accept", "decline", "cancel"]
AnsweredBy = Literal["user", "stop", "restart", "app"]


@dataclass(frozen=True, kw_only=True, slots=True)
class QuestionAsked(Event):
    """A running tool call asks the person something (MCP elicitation); the call waits for the answer."""

    KIND: ClassVar[str] = "question_asked"
    FLAGS: ClassVar[Flags] = Flags(attempt=True, urgent=False, prompt=True, listed=False, late_phase=True)
    attempt_id: str
    call_id: str
    question_id: str
    mode: QuestionMode
    message: str
    requested: str  # form: the requested schema as JSON text; url: the URL
    revision: str  # the MCP protocol revision the server negotiated


@dataclass(frozen=True, kw_only=True, slots=True)
class QuestionAnswered(Event):
    """The one answer to a question: accept (with content), decline or cancel; by the user, a stop or a restart."""

    KIND: ClassVar[str] = "question_answered"
    FLAGS: ClassVar[Flags] = Flags(attempt=True, urgent=False, prompt=True, listed=False, late_phase=True)
    attempt_id: str
    call_id: str
    question_id: str
    action: QuestionAction
    content: str | None = None  # accept in form mode: the values as JSON text
    by: AnsweredBy = "user"
    reason: str | None = None  # by ``app``: why it was answered without asking anyone (an editor that takes no forms)
    actor: str | None = None  # team mode: who did it (stamped on append from ``engine.people.acting``)


QuestionEvent = QuestionAsked | QuestionAnswered


class QuestionState(NamedTuple):
    """One question of a tool call and, once it has one, its answer."""

    question_id: str
    mode: QuestionMode
    message: str
    requested: str
    revision: str
    asked_ts: str = ""
    action: QuestionAction | None = None
    content: str | None = None
    by: AnsweredBy | None = None
    answered_ts: str = ""
    reason: str | None = None

    @property
    def answered(self) -> bool:
        return self.action is not None


def pending_question(questions: tuple[QuestionState, ...]) -> QuestionState | None:
    """The question still waiting for its answer (the last one asked), if any."""
    return next((q for q in reversed(questions) if not q.answered), None)


def asked(questions: tuple[QuestionState, ...], event: QuestionAsked) -> tuple[QuestionState, ...]:
    if any(q.question_id == event.question_id for q in questions):
        return questions
    new = QuestionState(
        question_id=event.question_id,
        mode=event.mode,
        message=event.message,
        requested=event.requested,
        revision=event.revision,
        asked_ts=event.ts,
    )
    return (*questions, new)


def answered(questions: tuple[QuestionState, ...], event: QuestionAnswered) -> tuple[QuestionState, ...]:
    """The questions with this one answered (the first answer wins; an unknown question changes nothing)."""
    return tuple(
        q._replace(action=event.action, content=event.content, by=event.by, answered_ts=event.ts, reason=event.reason)
        if q.question_id == event.question_id and not q.answered
        else q
        for q in questions
    )
