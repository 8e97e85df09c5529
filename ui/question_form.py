"""A tool's question inside its card (MCP elicitation): the form, or the link, and the answer once given.

Guarantees:
- A question still waiting (the call runs) shows the server's message, how long it has waited (counted in the
  browser, ``data-lc-since``), and, in form mode, one control per field of the requested schema (text, number,
  integer, yes/no, a choice), labelled with the field's title (its accessible name) and its description, required
  ones marked; buttons **Submit** (accept), **Decline** and **Cancel**. In url mode: the link's domain and the
  link as text in a link the person opens themselves (never opened by the page, ``rel=noopener noreferrer``;
  only http/https are links), with **Done** (accept) and **Decline**. A sign-in (mode ``sign_in``): a link
  "Sign in to <server>" that opens the server's sign-in page in a new tab, and **Cancel** (``ui.sign_in_card``).
- Submit checks the values against the schema first (``engine.tools.asking.check_answer``): a field that is not
  valid says why beside it and in one alert line, and nothing is sent. Typed values survive the card being
  redrawn (``drafts``).
- The box carries ``data-question-id`` and ``data-question`` (``waiting`` | ``answered``).
- An answered question shows one line: what was answered, and by whom (the user, a Stop, a restart); every tab
  derives it from the ledger, so an answer in one tab shows as answered in the others. Everything the server sent
  is shown as text (escaped).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from nicegui import ui

from engine.commands import Engine, InputRejected
from engine.tools import Field, check_answer, fields
from ledger.events import QuestionState
from ledger.state import ToolCallState
from ui.notices import notice
from ui.sign_in_card import sign_in_link

AnswerFn = Callable[[str, str, dict[str, Any] | None], None]  # (question_id, action, content)
GONE = "That question was answered already, or no longer waits for an answer."


def answer_question(engine: Engine, cid: str | None, question_id: str, action: Any, content: Any) -> None:
    """Give the running attempt a person's answer; a refusal is one notice (the form stays as it was)."""
    try:
        if cid is None:
            raise InputRejected(GONE)
        engine.answer_question(cid, question_id, action, content)  # here, or on the instance that runs it
    except InputRejected:
        notice(GONE, "warning")
    except ValueError as exc:
        notice(str(exc), "warning")


def show_questions(call: ToolCallState, live: bool, answer: AnswerFn | None, drafts: dict[str, Any]) -> None:
    for question in call.questions:
        if question.answered:
            answered_line(question)
        elif live and answer is not None:
            QuestionForm(question, answer, drafts)
        else:
            ui.label(f"Asked: {question.message} (not answered)").classes("lc-meta").mark("question-answered")


def answered_line(q: QuestionState) -> None:
    with ui.column().classes("gap-0 w-full lc-question").mark("question-answered") as box:
        box.props["data-question-id"] = q.question_id
        box.props["data-question"] = "answered"
        box.props["data-question-action"] = q.action or ""
        ui.label(q.message).classes("lc-meta")
        ui.label(answer_words(q)).classes("text-sm").mark("question-answer")


def answer_words(q: QuestionState) -> str:
    if q.by == "stop":
        return "Cancelled: the turn was stopped while the question waited."
    if q.by == "restart":
        return "Cancelled: the app restarted while the question waited."
    if q.by == "app":
        return f"Declined without asking: {q.reason}." if q.reason else "Declined without asking."
    if q.mode == "sign_in":
        return "Signed in." if q.action == "accept" else "Not signed in."
    if q.action == "accept" and q.mode == "url":
        return "Done: you went to the link."
    if q.action == "accept":
        values = json.loads(q.content) if q.content else {}
        shown = ", ".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in values.items())
        return f"Submitted: {shown}" if shown else "Submitted."
    return "Declined." if q.action == "decline" else "Cancelled."


class QuestionForm:
    def __init__(self, q: QuestionState, answer: AnswerFn, drafts: dict[str, Any]) -> None:
        self.q, self.answer = q, answer
        self.values: dict[str, Any] = drafts.setdefault(q.question_id, {})
        self.errors: dict[str, ui.label] = {}
        schema = _schema(q.requested) if q.mode == "form" else {}
        self.schema = schema
        with ui.column().classes("gap-2 w-full lc-question").mark("question-form") as box:
            box.props["data-question-id"] = q.question_id
            box.props["data-question"] = "waiting"
            box.props["role"] = "form"
            box.props["aria-label"] = "A question from the tool"
            with ui.row().classes("items-center gap-2 w-full no-wrap"):
                ui.icon("help", size="xs")
                ui.label(q.message).classes("font-medium").mark("question-message")
                ui.space()
                ui.label("waiting").classes("lc-meta lc-nowrap")
                ui.label("").classes("lc-meta").props(f"data-lc-since={q.asked_ts}").mark("question-waited")
            if q.mode == "url":
                self._url()
                return
            if q.mode == "sign_in":
                sign_in_link(q.requested, q.message, lambda: self.send("cancel"))
                return
            for f in fields(schema):
                self._field(f)
            self.alert = ui.label("").classes("lc-error-text").mark("question-alert")
            self.alert.props["role"] = "alert"
            with ui.row().classes("gap-2"):
                _button("Submit", "send", self.submit, "question-submit", primary=True)
                _button("Decline", "do_not_disturb_on", lambda: self.send("decline"), "question-decline")
                _button("Cancel", "close", lambda: self.send("cancel"), "question-cancel")

    def _field(self, f: Field) -> None:
        label = f"{f.label}{' *' if f.required else ''}"
        current = self.values.get(f.key, f.default)
        with ui.column().classes("gap-0 w-full"):
            if f.kind == "boolean":
                self.values.setdefault(f.key, bool(current))
                control: Any = ui.checkbox(label, value=bool(current))
            elif f.kind == "choice":
                ui.label(label).classes("text-sm")
                control = ui.radio(dict(f.choices), value=current).props("inline")
            else:
                control = ui.input(label, value="" if current is None else str(current))
                if f.kind in ("number", "integer"):
                    control.props("type=number")
            control.props["aria-label"] = f.label
            control.mark(f"question-field-{f.key}")
            control.on_value_change(lambda e, key=f.key: self.values.__setitem__(key, e.value))
            if f.description:
                ui.label(f.description).classes("lc-meta")
            self.errors[f.key] = ui.label("").classes("lc-error-text text-sm").mark(f"question-error-{f.key}")

    def _url(self) -> None:
        url = self.q.requested
        parts = urlsplit(url)
        ui.label(f"The tool asks you to open a page on {parts.hostname or 'an unknown site'}.").mark("question-domain")
        if parts.scheme in ("http", "https"):
            link = ui.link(url, url, new_tab=True).classes("lc-mono break-all").mark("question-link")
            link.props["rel"] = "noopener noreferrer"
        else:
            ui.label(url).classes("lc-mono break-all").mark("question-link")
        with ui.row().classes("gap-2"):
            _button("Done", "check", lambda: self.send("accept"), "question-done", primary=True)
            _button("Decline", "do_not_disturb_on", lambda: self.send("decline"), "question-decline")

    def submit(self) -> None:
        content, errors = check_answer(self.schema, self.values)
        for key, label in self.errors.items():
            label.set_text(errors.get(key, ""))
        if errors:
            self.alert.set_text("Not sent: " + " ".join(errors.values()))
            return
        self.alert.set_text("")
        self.answer(self.q.question_id, "accept", content)

    def send(self, action: str) -> None:
        self.answer(self.q.question_id, action, None)


def _button(text: str, icon: str, on_click: Callable[[], None], marker: str, *, primary: bool = False) -> None:
    button = ui.button(text, icon=icon, on_click=on_click).props(f"no-caps dense {'unelevated' if primary else 'flat'}")
    button.props["aria-label"] = text
    button.mark(marker)


def _schema(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
