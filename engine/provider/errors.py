"""A provider's HTTP error as it was sent, read from whatever litellm raised, and said as a sentence people read.

Guarantees:
- ``read_http_error(exc)`` walks the exception's chain (``original_exception``, ``__cause__``, ``__context__``)
  and returns what the provider sent, or None when no HTTP status came from it (a dropped connection, a timeout):
  ``status`` is the status of the provider's own response (the deepest in the chain: Anthropic's 529 stays 529
  though litellm raises a 500, Gemini's 429 is found under litellm's mid-stream wrapper), ``message`` and
  ``kind`` are the provider's own message and error type from its body in each dialect's shape (OpenAI's and
  Anthropic's ``error.message``/``error.type``, Gemini's ``error.message``/``error.status``, Ollama's ``error``
  string), ``retry_after`` the seconds it asked to wait (``retry-after``/``retry-after-ms`` headers, Gemini's
  ``RetryInfo.retryDelay``), ``body`` the body as sent (redacted, at most ``MAX_BODY`` characters).
- ``read_stream_error(exc)`` is the error a provider sent inside a stream it had begun with 200 (Anthropic's
  ``error`` event, OpenAI's and Gemini's ``data: {"error": ...}``, Ollama's ``{"error": ...}`` line): its message
  and type, read from the provider's own error under litellm's (the deepest ``litellm.llms`` error, or the OpenAI
  SDK's error body); None for a dropped or malformed stream (nothing from the provider in the chain).
- ``sentence(error)`` is one line with the provider's message, its error type and the HTTP status, and the wait
  it asked for: never a bytes literal, never JSON (a body that is not one of those shapes is not quoted).
- Neither raises on any exception or body; credentials are redacted (``engine.redaction``).
"""

from __future__ import annotations

import ast
import contextlib
import json
import re
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

from engine.redaction import redact

__all__ = ["MAX_BODY", "HttpError", "StreamError", "read_http_error", "read_stream_error", "sentence"]

MAX_BODY = 2000
MAX_MESSAGE = 240
_BYTES = re.compile(r"""b(['"]).*\1""", re.DOTALL)


@dataclass(frozen=True, kw_only=True, slots=True)
class HttpError:
    status: int
    message: str | None = None
    kind: str | None = None
    retry_after: float | None = None
    body: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class StreamError:
    message: str
    kind: str | None = None


def read_stream_error(exc: BaseException) -> StreamError | None:
    """The provider's error inside a begun stream, or None (see the module's guarantees)."""
    try:
        return None if read_http_error(exc) is not None else _read_stream(exc)
    except Exception:  # noqa: BLE001 - reading an error must never be a second one
        return None


def _read_stream(exc: BaseException) -> StreamError | None:
    for link in reversed(_chain(exc)):  # the deepest is the provider's own
        module = type(link).__module__
        body = getattr(link, "body", None)
        if (
            module.startswith(("openai", "engine.provider.openai_sse"))
            and isinstance(body, dict)
            and body.get("message")
        ):
            kind = body.get("type") or body.get("code")
            return StreamError(message=_one_line(str(body["message"])), kind=str(kind) if kind else None)
        message = str(getattr(link, "message", "") or "")
        if module.startswith("litellm.llms.") and message:
            got = re.search(r"unexpected response from \w+: (\{.*\})", message)  # Ollama's line, as a dict repr
            if got:
                with contextlib.suppress(ValueError, SyntaxError):
                    said = ast.literal_eval(got.group(1))
                    message = str(said.get("error", message)) if isinstance(said, dict) else message
            status = re.match(r"([A-Z][A-Z_]+) - (.*)", message, re.DOTALL)  # Gemini: "UNAVAILABLE - message"
            kind = status.group(1) if status else None
            return StreamError(message=_one_line(status.group(2) if status else message), kind=kind)
    return None


def read_http_error(exc: BaseException) -> HttpError | None:
    """What the provider sent with its error status, or None when it sent none (see the module's guarantees)."""
    try:
        return _read(exc)
    except Exception:  # noqa: BLE001 - reading an error must never be a second one
        return None


def sentence(error: HttpError | StreamError) -> str:
    """The provider's message, its error type and the HTTP status it sent, in one line."""
    if isinstance(error, StreamError):
        return redact(f"{error.message.rstrip('.')}{f' ({error.kind})' if error.kind else ''}.")
    what = ", ".join(p for p in (error.kind, f"HTTP {error.status}") if p)
    message = (error.message or "").strip().rstrip(".")
    if message.upper() == f"HTTP {error.status}":
        message = ""  # a body that only repeats the status says nothing more
    text = f"{message} ({what})." if message else f"The provider answered {what}."
    if error.retry_after is not None:
        text += f" It asked to wait {error.retry_after:g} s."
    return redact(text)


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 8:
        seen.append(current)
        current = getattr(current, "original_exception", None) or current.__cause__ or current.__context__
    return seen


def _read(exc: BaseException) -> HttpError | None:
    status: int | None = None
    headers: dict[str, str] = {}
    bodies: list[str] = []
    for link in _chain(exc):
        response = getattr(link, "response", None)
        code = getattr(response, "status_code", None)
        sent = dict(getattr(response, "headers", None) or {})  # litellm's made-up responses have no headers
        if isinstance(code, int) and 100 <= code < 600 and sent:
            status = code  # the deepest response is the provider's own
            headers.update({k.lower(): v for k, v in sent.items()})
            bodies.append(_text(response))
        extra = getattr(link, "litellm_response_headers", None)
        if extra:
            headers.update({k.lower(): v for k, v in dict(extra).items()})
        bodies.append(str(getattr(link, "message", "") or ""))
    if status is None or status < 400:
        return None
    parsed = next((p for p in (_parse(b) for b in reversed(bodies) if b) if p is not None), None)
    message, kind, delay = _fields(parsed) if parsed is not None else (None, None, None)
    raw = next((_unbytes(b) for b in reversed(bodies) if b.strip()), None)
    return HttpError(
        status=status,
        message=_one_line(message) if message else None,
        kind=kind,
        retry_after=_retry_after(headers) if delay is None else delay,
        body=redact(raw)[:MAX_BODY] if raw else None,
    )


def _text(response: Any) -> str:
    try:
        return str(response.text)
    except Exception:  # noqa: BLE001 - a streamed response not read yet has no text
        return ""


def _unbytes(text: str) -> str:
    """``b'...'`` (litellm's repr of the body) as the text it stands for; other text as it is."""
    found = _BYTES.search(text)
    if found:
        try:
            value = ast.literal_eval(found.group(0))
            if isinstance(value, bytes):
                return value.decode("utf-8", "replace")
        except (ValueError, SyntaxError):
            pass
    return text


def _parse(text: str) -> Any:
    """The JSON in a body (or in litellm's message around it), or None."""
    text = _unbytes(text)
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        return None
    try:
        return json.JSONDecoder().raw_decode(text[start:])[0]
    except ValueError:
        return None


def _fields(body: Any) -> tuple[str | None, str | None, float | None]:
    """(message, error type, retry delay) from a body in any dialect's shape."""
    if isinstance(body, list) and body:
        body = body[0]
    if not isinstance(body, dict):
        return None, None, None
    error = body.get("error", body)
    if isinstance(error, str):  # Ollama: {"error": "..."}
        return error, None, None
    if not isinstance(error, dict):
        return None, None, None
    message = error.get("message")
    kind = error.get("type") or error.get("status") or error.get("code")
    delay = None
    for detail in error.get("details") or []:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("RetryInfo"):
            delay = _seconds(str(detail.get("retryDelay", "")).removesuffix("s"))
    return (str(message) if message else None), (str(kind) if kind else None), delay


def _retry_after(headers: dict[str, str]) -> float | None:
    if "retry-after-ms" in headers:
        ms = _seconds(headers["retry-after-ms"])
        return None if ms is None else ms / 1000
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = _seconds(value)
    if seconds is not None:
        return seconds
    try:
        from datetime import UTC, datetime

        return max(0.0, (parsedate_to_datetime(value) - datetime.now(UTC)).total_seconds())
    except (TypeError, ValueError):
        return None


def _seconds(value: str) -> float | None:
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if 0 <= seconds < 86_400 else None


def _one_line(message: str) -> str:
    line = " ".join(message.split())
    return line if len(line) <= MAX_MESSAGE else line[: MAX_MESSAGE - 1] + "…"
