"""The light route for Anthropic, Gemini and Ollama: litellm's own call and its own stream parser, minus its wrapper.

Why: litellm's stream wrapper (``CustomStreamWrapper``) costs 500-800 µs of CPU per chunk (``chunk_creator``, usage
copies, hidden params, the rebuilt response at the end), while the provider's own parser, which the wrapper calls
first, costs ~20 µs. This route keeps everything litellm does except the wrapper's per-chunk work
(docs/operations.md, "The provider path's CPU").

Guarantees:
- The call is the plain route's very call: ``litellm.acompletion`` with ``engine.provider.calls.request_kwargs``, so
  litellm's provider handler builds and sends the request as it always does (Anthropic's ``/v1/messages`` with
  ``anthropic-version``, ``x-api-key`` and its beta-header filtering; Gemini's ``:streamGenerateContent?alt=sse``
  with its key, thought signatures and cache rebuilds; Ollama's ``/api/chat``), with litellm's HTTP client, and
  maps an error status to its exception as on the plain route (the same class and status: 400, 401, 429,
  Anthropic's 529, 503 ...).
- ``NativeStream`` reads the provider iterator the wrapper would read (Anthropic's and Gemini's
  ``ModelResponseIterator`` over ``aiter_sse_lines``, Ollama's ``OllamaChatCompletionResponseIterator``): its
  ``ModelResponseStream`` chunks become ``Delta``/``ToolPiece`` values by ``engine.provider.native_chunks``, with the
  finish reason, usage and ``reported`` as ``ProviderStream`` gives them for that provider.
- Gemini's request is sent by the wrapper's ``fetch_stream``, here in ``open_native``: a failure there, and any
  failure while reading, raises what the wrapper raises for it (its own ``_handle_stream_fallback_error``, given the
  text so far: ``MidStreamFallbackError`` around the mapped error, a non-retriable 4xx bare); a read error after the
  finish reason ends the stream, as the wrapper ends it. A body that ends without the provider's end marker
  (``EndWatch``) or without a finish reason raises ``cut_short``'s ``MidStreamFallbackError``, as ``ProviderStream``;
  its ``reported`` is then the prompt side the provider sent, partial (where the plain route, for a Gemini body
  that ends cleanly without its ``finishReason``, passes on the usage its wrapper rebuilt at the end as final).
- ``aclose()`` closes the wrapper, which closes the provider iterator and its HTTP response (the upstream sees the
  disconnect); a cancel while Gemini's request is pending closes it the same way.
- Where it differs from the wrapper, on purpose: Gemini's parser never tells the wrapper a chunk finished the
  answer, so the wrapper keeps the *last* chunk's finish reason (a usage-only chunk after ``MAX_TOKENS`` turns
  "length" into "stop") and fails a body reset after its ``finishReason``; here the answer's own finish reason
  stands and a reset after it ends the stream as complete (what the model said was all said). litellm's repetition
  check (the wrapper raises after 100 identical chunks) is not kept, as on the OpenAI light route: a repeating
  model streams on until its output limit, which the page shows and Stop ends.
- Not here: ``ollama/`` (``/api/generate``) yields litellm's ``GenericStreamingChunk`` dicts through another branch of
  the wrapper and the scripted upstream does not speak it, so it stays on the plain route (``NATIVE``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, NoReturn

from engine.offline import litellm
from engine.provider.calls import Delta, ToolPiece
from engine.provider.end_markers import NO_END, EndWatch, cut_short
from engine.provider.native_chunks import Pieces
from ledger.events import Usage

__all__ = ["NATIVE", "NativeStream", "open_native"]

#: litellm providers read by this route (``get_llm_provider``'s names); every other non-OpenAI one: the plain route.
NATIVE = frozenset({"anthropic", "gemini", "ollama_chat"})


async def open_native(kwargs: dict[str, Any]) -> NativeStream:
    """``litellm.acompletion`` as on the plain route; raise litellm's exception for errors before streaming."""
    ll = litellm()
    wrapper = await ll.acompletion(**kwargs)
    try:
        iterator = wrapper.completion_stream
        if iterator is None:  # Gemini: the wrapper sends the request at its first read; it is sent here
            iterator = await wrapper.fetch_stream()
    except Exception as exc:  # noqa: BLE001 - mapped as the wrapper maps it
        await wrapper.aclose()
        error = _as_wrapper_raises(wrapper, exc, "", first=True)
        raise error from error.__cause__  # the chain as the wrapper leaves it (``engine.provider.errors`` walks it)
    except BaseException:
        await wrapper.aclose()
        raise
    return NativeStream(ll, wrapper, iterator)


class NativeStream:
    """Deltas of one HTTP response; ``finish_reason`` and ``usage`` are known once it is exhausted."""

    __slots__ = ("_ends", "_iter", "_ll", "_pieces", "_wrapper", "finish_reason", "usage")

    def __init__(self, ll: Any, wrapper: Any, iterator: Any) -> None:
        self._ll, self._wrapper = ll, wrapper
        self._ends = EndWatch()
        self._ends.attach(wrapper.custom_llm_provider, iterator)
        self._iter: AsyncIterator[Any] = iterator.__aiter__()
        self._pieces = Pieces()
        self.finish_reason: str | None = None
        self.usage: Usage | None = None

    def __aiter__(self) -> NativeStream:
        return self

    async def __anext__(self) -> Delta | ToolPiece:
        pieces = self._pieces
        if pieces.queued:
            return pieces.queued.popleft()
        while True:
            try:
                chunk = await self._iter.__anext__()
            except StopAsyncIteration:
                await self._finished()
            except Exception as exc:  # noqa: BLE001 - every failure while reading is the wrapper's
                if pieces.finish is not None and _is_read_error(exc):  # the wrapper ends here, as at the end
                    await self._finished()
                error = await self._failed(exc)
                raise error from error.__cause__
            if chunk is not None and pieces.take(chunk):
                return pieces.queued.popleft()

    @property
    def reported(self) -> Usage | None:
        """What the provider reported so far: its final usage, else the prompt side it sent before the end."""
        return self.usage or self._pieces.reported

    async def aclose(self) -> None:
        await self._wrapper.aclose()

    async def _finished(self) -> NoReturn:
        """The body ended: the answer with it, or, without the provider's end marker or a finish reason, cut."""
        if self._ends.cut or self._pieces.finish is None:
            raise await self._failed(ConnectionResetError(NO_END), cut=True) from None
        self.finish_reason = self._pieces.finish_reason()
        self.usage = self._pieces.final_usage(self._ll)
        raise StopAsyncIteration

    async def _failed(self, exc: Exception, *, cut: bool = False) -> Exception:
        await self._wrapper.aclose()
        partial, first = self._pieces.text(), self._pieces.count == 0
        if cut:
            wrapper = self._wrapper
            provider, model = str(wrapper.custom_llm_provider), str(wrapper.model or "")
            return cut_short(self._ll, provider, model, exc, partial, first)
        return _as_wrapper_raises(self._wrapper, exc, partial, first=first)


def _as_wrapper_raises(wrapper: Any, exc: Exception, partial: str, *, first: bool) -> Exception:
    """What ``CustomStreamWrapper`` raises for ``exc`` in its ``__anext__``, the text so far being ``partial``."""
    wrapper.response_uptil_now, wrapper.sent_first_chunk = partial, not first
    try:
        wrapper._handle_stream_fallback_error(exc)  # noqa: SLF001 - litellm's own mapping, not a copy of it
    except Exception as raised:  # noqa: BLE001 - it always raises
        return raised
    return exc  # pragma: no cover - it never returns


def _is_read_error(exc: Exception) -> bool:
    import httpx

    return isinstance(exc, (httpx.ReadError, httpx.RemoteProtocolError))
