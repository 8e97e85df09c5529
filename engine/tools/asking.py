"""What a tool's question is (MCP elicitation) and what makes an answer valid, independent of the SDK.

Guarantees:
- ``Question`` is what a server asked (form: a JSON schema of flat, typed fields; url: a link), or the app's own
  ``sign_in`` (a remote server's OAuth sign-in, answered by its ``done`` future when it came back);
  ``QuestionAnswer`` is what goes back (``accept`` with content for a form, ``decline``, ``cancel``),
  ``PendingQuestion`` is a question a running attempt waits on (its future is resolved once: the first answer wins).
- ``fields`` reads the form's fields in the schema's order: string, number, integer, boolean and single-choice
  enums (``enum`` with optional ``enumNames``, or ``oneOf`` of ``const``/``title``); the title (else the key) is
  the label and accessible name; ``required`` is honoured.
- ``check_answer`` turns what a person typed into the content sent back, or says per field why not (required,
  type, ``minimum``/``maximum``, ``minLength``/``maxLength``, ``pattern``, a choice that is not offered, a
  ``format`` of email/uri/date): invalid input is never sent. Nothing here does I/O.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal

Action = Literal["accept", "decline", "cancel"]
FieldKind = Literal["string", "number", "integer", "boolean", "choice"]


@dataclass(frozen=True, slots=True)
class Question:
    mode: Literal["form", "url", "sign_in"]
    message: str
    schema: dict[str, Any] = field(default_factory=dict)  # form mode
    url: str = ""  # url mode; sign_in: the authorization URL
    elicitation_id: str = ""
    revision: str = ""
    # sign_in: resolved when the sign-in came back (the callback route) with the answer it gives (accept/decline)
    done: asyncio.Future[Action] | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class QuestionAnswer:
    action: Action
    content: dict[str, Any] | None = None
    by: Literal["user", "stop", "restart", "app"] = "user"
    reason: str | None = None  # by ``app``: why nobody was asked


@dataclass(slots=True)
class PendingQuestion:
    call_id: str
    question: Question
    future: asyncio.Future[QuestionAnswer]


@dataclass(frozen=True, slots=True)
class Field:
    key: str
    kind: FieldKind
    label: str
    description: str = ""
    required: bool = False
    choices: tuple[tuple[str, str], ...] = ()  # (value, label) for a choice
    default: Any = None


def fields(schema: dict[str, Any]) -> tuple[Field, ...]:
    """The form's fields, in the schema's order (see the module's guarantees)."""
    props = schema.get("properties")
    required = set(schema.get("required") or ())
    out = []
    for key, prop in props.items() if isinstance(props, dict) else ():
        if not isinstance(prop, dict):
            continue
        choices = _choices(prop)
        kind: FieldKind = "choice" if choices else prop.get("type", "string")
        if kind not in ("string", "number", "integer", "boolean", "choice"):
            kind = "string"
        label = str(prop.get("title") or key)
        out.append(
            Field(key, kind, label, str(prop.get("description") or ""), key in required, choices, prop.get("default"))
        )
    return tuple(out)


def check_answer(schema: dict[str, Any], raw: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """(content to send, {field key: why it is not valid}); send the content only when the second is empty."""
    given = schema.get("properties")
    props: dict[str, Any] = given if isinstance(given, dict) else {}
    content: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for f in fields(schema):
        value = raw.get(f.key)
        if value is None or (isinstance(value, str) and value.strip() == "" and f.kind != "string"):
            if f.required:
                errors[f.key] = f"{f.label} is required."
            continue
        if f.kind == "string" and value == "" and not f.required:
            continue
        typed, why = _typed(f, value, props.get(f.key, {}))
        if why:
            errors[f.key] = f"{f.label}: {why}"
        else:
            content[f.key] = typed
    return content, errors


def content_json(content: dict[str, Any] | None) -> str | None:
    return None if content is None else json.dumps(content, ensure_ascii=False, sort_keys=True)


def _choices(prop: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    if isinstance(prop.get("enum"), list):
        names = prop.get("enumNames") if isinstance(prop.get("enumNames"), list) else None
        return tuple(
            (str(v), str(names[i]) if names and i < len(names) else str(v)) for i, v in enumerate(prop["enum"])
        )
    options = prop.get("oneOf") or prop.get("anyOf")
    if isinstance(options, list) and options and all(isinstance(o, dict) and "const" in o for o in options):
        return tuple((str(o["const"]), str(o.get("title") or o["const"])) for o in options)
    return ()


def _typed(f: Field, value: Any, prop: dict[str, Any]) -> tuple[Any, str | None]:
    match f.kind:
        case "boolean":
            if isinstance(value, bool):
                return value, None
            return None, "choose yes or no."
        case "choice":
            if str(value) not in {v for v, _ in f.choices}:
                return None, "choose one of the options offered."
            return str(value), None
        case "integer" | "number":
            return _number(f, value, prop)
        case _:
            return _string(str(value), prop)


def _number(f: Field, value: Any, prop: dict[str, Any]) -> tuple[Any, str | None]:
    text = str(value).strip()
    try:
        number: float | int = int(text) if f.kind == "integer" else float(text)
    except ValueError:
        return None, "enter a whole number." if f.kind == "integer" else "enter a number."
    if isinstance(number, float) and not math.isfinite(number):
        return None, "enter a finite number."
    if isinstance(number, float) and number.is_integer() and "." not in text and "e" not in text.lower():
        number = int(number)
    low, high = prop.get("minimum"), prop.get("maximum")
    if isinstance(low, int | float) and number < low:
        return None, f"must be at least {low:g}."
    if isinstance(high, int | float) and number > high:
        return None, f"must be at most {high:g}."
    return number, None


def _string(text: str, prop: dict[str, Any]) -> tuple[Any, str | None]:
    low, high = prop.get("minLength"), prop.get("maxLength")
    if isinstance(low, int) and len(text) < low:
        return None, f"needs at least {low} characters."
    if isinstance(high, int) and len(text) > high:
        return None, f"takes at most {high} characters."
    pattern = prop.get("pattern")
    if isinstance(pattern, str):
        try:
            if re.search(pattern, text) is None:
                return None, "does not have the expected form."
        except re.error:
            pass  # a pattern the server got wrong is not the person's fault
    return (text, None) if _format_ok(prop.get("format"), text) else (None, f"is not a valid {prop['format']}.")


def _format_ok(fmt: Any, text: str) -> bool:
    try:
        match fmt:
            case "email":
                return re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", text) is not None
            case "uri":
                return re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", text) is not None
            case "date":
                date.fromisoformat(text)
            case "date-time":
                datetime.fromisoformat(text)
    except ValueError:
        return False
    return True
