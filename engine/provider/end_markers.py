"""Whether a stream reached its provider's end marker: a body that ends without one was cut, never a whole answer.

A proxy's idle timeout, a load balancer's drain or a connection closed between two chunks ends the HTTP body
properly (the last chunk of a chunked body, or the declared length), so nothing below the app raises: only the
missing end marker tells a cut answer from a finished one.

Guarantees:
- The markers: OpenAI's chat completions end with a chunk carrying ``finish_reason`` or with ``data: [DONE]``
  (the light route reads both itself; litellm's plain route raises on a clean end without a finish reason),
  Anthropic's messages with ``message_stop`` (litellm's wrapper stops reading at the ``message_delta`` that
  carries the ``stop_reason``, which comes right before it: that counts too), Gemini's with a candidate's
  ``finishReason``, Ollama's with ``done: true``.
- ``EndWatch`` reads every raw chunk of litellm's provider iterator (its ``chunk_parser``, which receives the
  provider's parsed JSON) for Anthropic's, Gemini's and Ollama's markers (``WATCHED``); ``cut`` is true only for
  a stream whose iterator it watched and that ended without its marker (an iterator it does not know is never
  called cut: litellm decides there, as before).
- ``cut_short`` is the exception for a failure while reading, as litellm's stream wrapper raises it: a
  ``MidStreamFallbackError`` over an ``APIConnectionError``, with the partial text, so ``engine.provider.failures``
  classifies it ``connection`` (Connection lost, not in context) on every route and dialect.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["NO_END", "WATCHED", "EndWatch", "cut_short", "has_end"]

#: litellm providers whose raw chunks ``EndWatch`` reads for the end marker (OpenAI-compatible ones are litellm's).
WATCHED = frozenset({"anthropic", "gemini", "vertex_ai", "vertex_ai_beta", "ollama", "ollama_chat"})

#: What a stream cut without its end marker says (as litellm says it for OpenAI's chat stream).
NO_END = "Stream ended before a finish_reason was received"


def has_end(chunk: Any) -> bool:
    """Whether one raw chunk of Anthropic's, Gemini's or Ollama's stream is (or carries) its end marker."""
    if not isinstance(chunk, dict):
        return False
    if chunk.get("type") == "message_stop" or chunk.get("done") is True:
        return True
    if chunk.get("type") == "message_delta":  # Anthropic's stop reason, right before message_stop (see the module)
        delta = chunk.get("delta")
        return isinstance(delta, dict) and bool(delta.get("stop_reason"))
    candidates = chunk.get("candidates")
    return isinstance(candidates, list) and any(isinstance(c, dict) and c.get("finishReason") for c in candidates)


class EndWatch:
    """Watches the raw chunks of litellm's provider iterator for the end marker (see the module)."""

    __slots__ = ("seen", "watched")

    def __init__(self) -> None:
        self.seen = False
        self.watched = False

    def attach(self, provider: str | None, iterator: Any) -> None:
        """Read every chunk ``iterator`` parses from now on (its ``chunk_parser``), where it has one and the
        provider is one of ``WATCHED``."""
        parse: Callable[..., Any] | None = getattr(iterator, "chunk_parser", None)
        if parse is None or self.watched or provider not in WATCHED:
            return
        self.watched = True

        def watched(chunk: Any) -> Any:  # litellm calls it as ``chunk_parser(chunk=...)``
            if not self.seen and has_end(chunk):
                self.seen = True
            return parse(chunk=chunk)

        iterator.chunk_parser = watched

    @property
    def cut(self) -> bool:
        return self.watched and not self.seen


def cut_short(
    ll: Any, provider: str, model: str, exc: Exception, partial: str, first: bool, message: str | None = None
) -> Exception:
    """What litellm's stream wrapper raises for a failure while reading: a ``MidStreamFallbackError`` (its message
    ``message``, else the failure's own), named after the provider as litellm names it (``OpenAIException - …``)."""
    if isinstance(exc, ll.exceptions.MidStreamFallbackError):
        return exc  # type: ignore[no-any-return]
    said = message or str(exc) or type(exc).__name__
    label = "OpenAI" if provider in ("openai", "hosted_vllm", "custom_openai") else provider.capitalize()
    cause = ll.APIConnectionError(message=f"{label}Exception - {said}", llm_provider=provider, model=model)
    cause.__cause__ = exc
    failure: Exception = ll.exceptions.MidStreamFallbackError(
        message=str(cause),
        model=model,
        llm_provider=provider,
        original_exception=cause,
        generated_content=partial,
        is_pre_first_chunk=first,
    )
    return failure
