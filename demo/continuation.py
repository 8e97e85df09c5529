"""The demo model's Continue: it goes on with the text it is given, as a model continuing its own answer does,
instead of answering the request to continue afresh.

Guarantees (pure, deterministic): ``continued(messages)`` recognises the first request of a continuation
(``ledger.continuation_history``): the answer's prefix as the last message (an assistant prefill), or the prefix
followed by a user message that starts with ``CONTINUE_REQUEST`` (the words of ``CONTINUE_INSTRUCTION``); it
returns the request as it was before the prefix (up to the question, which decides the answer) and the prefix;
None for any other request. ``rest(full, prefix)`` is what follows ``prefix`` in ``full``, the answer the demo gives
that question: joined at the stop (``ledger.continuation.joined``: whitespace there kept once) they are ``full``
exactly. A prefix the demo did not write (another model's, or an edited one) is ended with a closing sentence.
"""

from __future__ import annotations

from typing import Any

CONTINUE_REQUEST = "Your previous answer was cut off"  # how a continuation's request asks to go on
ENDING = " That is where the answer had stopped; it is complete now."


def _text(message: dict[str, Any]) -> str | None:
    content = message.get("content")
    return content if isinstance(content, str) else None


def continued(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str] | None:
    """(the request before the prefix, the prefix) for a continuation's first request, else None."""
    end = len(messages)
    if end and messages[-1].get("role") == "user" and (_text(messages[-1]) or "").startswith(CONTINUE_REQUEST):
        end -= 1
    if not end or messages[end - 1].get("role") != "assistant" or messages[end - 1].get("tool_calls"):
        return None
    prefix = _text(messages[end - 1])
    return (messages[: end - 1], prefix) if prefix else None


def rest(full: str, prefix: str) -> str:
    """What follows ``prefix`` in ``full`` (see the module's guarantees)."""
    stopped = prefix.rstrip()
    if full.startswith(stopped) and len(full) > len(stopped):
        return full[len(stopped) :]
    return ENDING
