"""Every provider exception mapped, in one place, to what the ledger's ``failed`` event records.

Guarantees: ``classify`` never raises; its summary is one readable line (no traceback, no litellm prefixes,
at most 300 characters) with credentials redacted (``engine.redaction``); ``retryable`` is true only for errors that
may pass on a re-send (rate limit, server error, connection, timeout). An error the provider sent with an HTTP
status (found under litellm's wrappers by ``engine.provider.errors``, whatever dialect) is classified by that
status, which is ``http_status``; its summary is the provider's own message, error type and status
(``provider_errors.sentence``: never a bytes literal or JSON), ``retry_after`` the wait it asked for and ``body``
the body it sent (for the ledger's audit). An error the provider sent inside a begun stream (Anthropic's
``overloaded_error`` event, say) is the provider's too: ``server`` (or ``rate_limit``) in its own words, never
"the connection dropped"; a dropped or malformed stream stays ``connection`` / ``malformed_stream``.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Any

from engine.offline import litellm
from engine.provider.errors import HttpError, read_http_error, read_stream_error, sentence
from engine.redaction import redact
from ledger.events import ErrorType

MAX_SUMMARY = 300
#: Each provider's words for a request longer than the model's context window (OpenAI's ``context_length_exceeded``,
#: Anthropic's "prompt is too long", Gemini's "input token count ... exceeds", Ollama's and others' "context length").
TOO_LONG = re.compile(
    r"context[_ ]length|context window|maximum context|prompt is too long|input token count .* exceeds|too many tokens",
    re.IGNORECASE,
)
TOO_LONG_SAID = "The conversation is too long for this model (Compact and retry summarizes the earlier turns):"
_PREFIX = re.compile(r"^(?:litellm\.\w+:\s*|\w+(?:Error|Exception):\s*|OpenAIException\s*-\s*|Error code: \d+ - )+")


@dataclass(frozen=True, kw_only=True, slots=True)
class Failure:
    error_type: ErrorType
    summary: str
    http_status: int | None = None
    retryable: bool = False
    retry_after: float | None = None
    body: str | None = None

    def fields(self) -> dict[str, Any]:
        """What a ``failed`` event records of this failure (its caller adds the ids, the request and the usage)."""
        return {
            "error_type": self.error_type,
            "http_status": self.http_status,
            "summary": self.summary,
            "retryable": self.retryable,
            "retry_after": self.retry_after,
            "body": self.body,
        }


class StreamStalled(Exception):
    """No chunk arrived within the idle or first-chunk timeout."""

    def __init__(self, seconds: float, first: bool) -> None:
        what = "the first chunk" if first else "the next chunk"
        super().__init__(f"No answer from the provider: waited {seconds:g} s for {what}.")


def classify(exc: BaseException) -> Failure:
    """What kind of failure ``exc`` is, and a line a person can read."""
    try:
        return _classify(exc)
    except Exception:  # noqa: BLE001 - classifying must never be the second failure
        return Failure(error_type="unknown", summary=f"Unexpected error ({type(exc).__name__}).")


def _classify(exc: BaseException) -> Failure:
    litellm()
    from litellm import exceptions as ll

    http = read_http_error(exc)
    if http is not None:
        return _from_http(exc, http)
    said = read_stream_error(exc)
    if said is not None:  # the provider's own error inside the stream (the HTTP status was 200)
        limited = any(isinstance(e, ll.RateLimitError) for e in (exc, getattr(exc, "original_exception", None)))
        summary = f"The provider stopped the answer with an error: {sentence(said)}"[:MAX_SUMMARY]
        return Failure(error_type="rate_limit" if limited else "server", summary=summary, retryable=True)
    status = _status(exc)
    text = _clean(exc)
    if isinstance(exc, StreamStalled | asyncio.TimeoutError | ll.Timeout):
        return Failure(error_type="timeout", summary=text or "The provider took too long to answer.", retryable=True)
    if isinstance(exc, ll.MidStreamFallbackError):
        original = exc.original_exception
        if _is_malformed(exc):
            return Failure(
                error_type="malformed_stream",
                summary=f"The provider sent a malformed stream: {_clean(original or exc)}",
            )
        return Failure(
            error_type="connection",
            summary="The connection to the provider dropped in the middle of the answer.",
            retryable=True,
        )
    if isinstance(exc, ll.RateLimitError):
        return Failure(
            error_type="rate_limit",
            http_status=status or 429,
            summary=f"Rate limited by the provider: {text}",
            retryable=True,
        )
    if isinstance(exc, ll.AuthenticationError | ll.PermissionDeniedError):
        return Failure(
            error_type="auth",
            http_status=status,
            summary=f"The provider refused the credentials: {text} Check the provider's API key variable.",
        )
    if isinstance(exc, ll.ContextWindowExceededError) or TOO_LONG.search(text):
        return Failure(error_type="context_length", http_status=status, summary=f"{TOO_LONG_SAID} {text}"[:MAX_SUMMARY])
    if isinstance(exc, ll.NotFoundError):
        return Failure(error_type="bad_request", http_status=status, summary=f"Unknown model or endpoint: {text}")
    if isinstance(exc, ll.BadRequestError | ll.UnprocessableEntityError):
        return Failure(
            error_type="bad_request", http_status=status, summary=f"The provider rejected the request: {text}"
        )
    if isinstance(exc, ll.APIConnectionError | ConnectionError | OSError):
        return Failure(error_type="connection", summary=f"Could not reach the provider: {text}", retryable=True)
    if (
        isinstance(exc, ll.InternalServerError | ll.ServiceUnavailableError | ll.BadGatewayError)
        or (status or 0) >= 500
    ):
        return Failure(
            error_type="server", http_status=status, summary=f"The provider had a server error: {text}", retryable=True
        )
    if isinstance(exc, json.JSONDecodeError):
        return Failure(error_type="malformed_stream", summary=f"The provider sent a malformed stream: {text}")
    return Failure(error_type="unknown", http_status=status, summary=f"Unexpected error ({type(exc).__name__}): {text}")


def _from_http(exc: BaseException, http: HttpError) -> Failure:
    """A failure the provider answered with an HTTP status: classified by that status, said in its words."""
    from litellm import exceptions as ll

    said = sentence(http)[:MAX_SUMMARY]
    error_type: ErrorType
    if http.status == 429:
        error_type, summary = "rate_limit", f"Rate limited by the provider: {said}"
    elif http.status in (401, 403):
        error_type = "auth"
        summary = f"The provider refused the credentials: {said} Check the provider's API key variable."
    elif http.status == 408:
        error_type, summary = "timeout", f"The provider timed out: {said}"
    elif http.status >= 500:
        error_type, summary = "server", f"The provider had a server error: {said}"
    elif isinstance(exc, ll.ContextWindowExceededError) or TOO_LONG.search(f"{http.message} {http.kind}"):
        error_type, summary = "context_length", f"{TOO_LONG_SAID} {said}"
    elif http.status == 404:
        error_type, summary = "bad_request", f"Unknown model or endpoint: {said}"
    else:
        error_type, summary = "bad_request", f"The provider rejected the request: {said}"
    return Failure(
        error_type=error_type,
        summary=summary[:MAX_SUMMARY],
        http_status=http.status,
        retryable=error_type in ("rate_limit", "server", "timeout"),
        retry_after=http.retry_after,
        body=http.body,
    )


def _clean(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    for _ in range(3):
        text = _PREFIX.sub("", text).strip()
    text = re.sub(r"\s*(Original exception:|Received Model Group|LiteLLM Retried:).*$", "", text).strip()
    text = redact(text)
    if text and text[-1] not in ".!?":
        text += "."
    return text[:MAX_SUMMARY]


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) and 100 <= status < 600 else None


def _is_malformed(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    for _ in range(6):
        if seen is None:
            break
        if isinstance(seen, json.JSONDecodeError) or re.search(r"Expecting|Unterminated|delimiter|JSON", str(seen)):
            return True
        seen = getattr(seen, "original_exception", None) or seen.__cause__ or seen.__context__
    return False
