"""The light route for OpenAI-compatible providers: still ``litellm.acompletion``, a fraction of the CPU per chunk.

Why: litellm's stream wrapper builds pydantic objects for every chunk (the OpenAI SDK's ``construct_type``, then
litellm's ``chunk_creator`` and hidden-params bookkeeping): 500-800 µs of CPU per chunk. This route keeps the call
in litellm and replaces only the per-chunk parsing (docs/operations.md, "The provider path's CPU").

Guarantees:
- The call is ``litellm.acompletion(model="ledger_chat_openai/<the model string>", ...)``: ``HANDLER`` is a
  ``litellm.CustomLLM`` registered once through ``litellm.custom_provider_map``; litellm routes the call to it.
- The handler builds the request with litellm's own provider config for the model's provider (``openai``,
  ``hosted_vllm``, ``custom_openai``: ``map_openai_params``, ``transform_request``, ``validate_environment``,
  ``get_complete_url``), api_base and key resolved as litellm resolves them, and sends it with litellm's own HTTP
  client (``get_async_httpx_client``: its transport and settings). One request per call, never a re-send of one
  that reached the provider.
- An HTTP error status raises what litellm raises on its own route (``exception_type`` over an ``OpenAIError``
  with the provider's status, headers and body: ``RateLimitError`` 429, ``AuthenticationError`` 401, ...), from
  ``open_light`` itself, before anything streams; a connection refused raises ``InternalServerError`` 500, as the
  plain route does. A failure after the response began raises ``MidStreamFallbackError`` with the partial text,
  as litellm's stream wrapper does (a malformed chunk keeps its ``JSONDecodeError`` as the cause); so does a body
  that ends without a ``finish_reason`` and without ``[DONE]`` (cut, not finished: ``engine.provider.end_markers``).
- The SSE body is parsed by ``engine.provider.openai_sse`` into litellm's ``GenericStreamingChunk`` dicts;
  ``LightStream`` reads them straight from the handler's iterator (``completion_stream``), skipping the wrapper's
  per-chunk objects, and yields the same ``Delta``/``ToolPiece`` values as ``engine.provider.calls.ProviderStream``,
  with ``finish_reason`` and ``usage`` (cached tokens included) from the final chunks.
- ``LightStream.aclose()`` closes litellm's stream, which closes the handler's iterator and with it the HTTP
  response (the upstream sees the disconnect); a cancel while the request is pending unwinds the same way.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import Any

import orjson

from engine.offline import litellm
from engine.provider.calls import COMPATIBLE, Delta, ToolPiece
from engine.provider.end_markers import NO_END, cut_short
from engine.provider.openai_sse import SseEvents, StreamErrorEvent, generic_chunks
from engine.provider.url_credentials import is_basic
from ledger.events import Usage

__all__ = ["COMPATIBLE", "PROVIDER", "ROUTE_VARIABLE", "LightStream", "open_light"]

PROVIDER = "ledger_chat_openai"
#: ``litellm`` forces the plain route (litellm's stream wrapper) for every provider; anything else: automatic.
ROUTE_VARIABLE = "LEDGER_CHAT_STREAM_ROUTE"
_handler: Any = None


async def open_light(kwargs: dict[str, Any]) -> LightStream:
    """``litellm.acompletion`` through the handler; raise litellm's exception for errors before streaming."""
    ll = litellm()
    _register(ll)
    response = await ll.acompletion(**{**kwargs, "model": f"{PROVIDER}/{kwargs['model']}"})
    chunks: AsyncIterator[dict[str, Any]] = response.completion_stream
    try:
        first = await anext(chunks, None)  # the request is sent here: its errors are the call's, not the stream's
    except BaseException:
        await response.aclose()
        raise
    return LightStream(response, chunks, first)


class LightStream:
    """Deltas of one HTTP response; ``finish_reason`` and ``usage`` are known once it is exhausted."""

    __slots__ = ("_chunks", "_next", "_queued", "_response", "finish_reason", "usage")

    def __init__(self, response: Any, chunks: AsyncIterator[dict[str, Any]], first: dict[str, Any] | None) -> None:
        self._response, self._chunks, self._next = response, chunks, first
        self._queued: Delta | None = None
        self.finish_reason: str | None = None
        self.usage: Usage | None = None

    def __aiter__(self) -> LightStream:
        return self

    async def __anext__(self) -> Delta | ToolPiece:
        if self._queued is not None:
            queued, self._queued = self._queued, None
            return queued
        while True:
            chunk = self._next
            if chunk is None:
                chunk = await self._chunks.__anext__()
            else:
                self._next = None
            tool = chunk["tool_use"]
            if tool is not None:
                function = tool["function"]
                return ToolPiece(
                    index=tool["index"], arguments=function["arguments"], call_id=tool["id"], name=function["name"]
                )
            if chunk["finish_reason"]:
                self.finish_reason = chunk["finish_reason"]
            usage = chunk["usage"]
            if usage is not None:
                details = usage.get("prompt_tokens_details") or {}
                thought = int((usage.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0)
                self.usage = Usage(
                    input_tokens=usage["prompt_tokens"], output_tokens=usage["completion_tokens"],
                    cached_tokens=int(details.get("cached_tokens") or 0), reasoning_tokens=thought,
                )  # fmt: skip
            fields = chunk.get("provider_specific_fields")
            reasoning = fields.get("reasoning_content") if fields else None
            text = chunk["text"]
            if reasoning:
                if text:
                    self._queued = Delta(text)
                return Delta(reasoning, "reasoning")
            if text:
                return Delta(text)

    @property
    def reported(self) -> Usage | None:
        """What the provider reported so far: an OpenAI-compatible provider reports usage in its last chunk only."""
        return self.usage

    async def aclose(self) -> None:
        await self._response.aclose()


def _register(ll: Any) -> None:
    global _handler
    if _handler is None:
        _handler = _make_handler(ll)
    if not any(entry.get("provider") == PROVIDER for entry in ll.custom_provider_map):
        ll.custom_provider_map = [*ll.custom_provider_map, {"provider": PROVIDER, "custom_handler": _handler}]


def _make_handler(ll: Any) -> Any:
    """The ``CustomLLM`` (made once litellm is imported: the import is slow and happens off the event loop)."""

    class OpenAICompatible(ll.CustomLLM):  # type: ignore[misc]
        async def astreaming(
            self,
            model: str,
            messages: list[Any],
            api_base: str | None = None,
            api_key: str | None = None,
            optional_params: dict[str, Any] | None = None,
            headers: dict[str, Any] | None = None,
            timeout: Any = None,
            **_: Any,
        ) -> AsyncIterator[dict[str, Any]]:
            # closed with this generator, not left to the garbage collector's finalizer: litellm's ``aclose`` closes
            # this one, and the HTTP response must close in that same call (a Stop really closes the upstream then)
            stream = _stream(ll, model, messages, api_base, api_key, optional_params or {}, headers, timeout)
            async with aclosing(stream):
                async for chunk in stream:
                    yield chunk

    return OpenAICompatible()


async def _stream(
    ll: Any,
    model: str,
    messages: list[Any],
    api_base: str | None,
    api_key: str | None,
    params: dict[str, Any],
    headers: dict[str, Any] | None,
    timeout: Any,
) -> AsyncGenerator[dict[str, Any], None]:
    from litellm.types.utils import LlmProviders
    from litellm.utils import ProviderConfigManager

    name, provider, key, base = ll.get_llm_provider(model, api_base=api_base, api_key=api_key)
    if provider == "openai":
        base = base or ll.api_base or os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE")
        base = base or "https://api.openai.com/v1"
        key = key or ll.api_key or ll.openai_key or os.environ.get("OPENAI_API_KEY")
    if is_basic(headers):  # the URL's own credentials (engine.provider.url_credentials) fill the Authorization header
        key = None
    config: Any = ProviderConfigManager.get_provider_chat_config(model=name, provider=LlmProviders(provider))
    wanted = {k: v for k, v in params.items() if v is not None}
    mapped = config.map_openai_params(non_default_params=wanted, optional_params={}, model=name, drop_params=True)
    sent = config.validate_environment(
        headers=dict(headers or {}), model=name, messages=messages, optional_params=mapped,
        litellm_params={}, api_key=key, api_base=base,
    )  # fmt: skip
    url = config.get_complete_url(
        api_base=base, api_key=key, model=name, optional_params=mapped, litellm_params={}, stream=True
    )
    body = config.transform_request(
        model=name, messages=messages, optional_params=mapped, litellm_params={}, headers=sent
    )
    response = await _post(ll, provider, name, url, body, sent, timeout)
    events, text, finished = SseEvents(), [], False
    try:
        try:
            async for piece in response.aiter_bytes():
                for payload in events.feed(piece):
                    for chunk in generic_chunks(payload):
                        if chunk["text"]:
                            text.append(chunk["text"])
                        finished = finished or bool(chunk["finish_reason"])
                        yield chunk
            for payload in events.close():
                for chunk in generic_chunks(payload):
                    finished = finished or bool(chunk["finish_reason"])
                    yield chunk
            if not (finished or events.done):  # the body ended, the answer did not (engine.provider.end_markers)
                raise ConnectionResetError(NO_END)
        except Exception as exc:  # noqa: BLE001 - every failure mid-stream becomes litellm's
            raise _mid_stream(ll, provider, name, exc, "".join(text), not text) from exc
    finally:
        await response.aclose()


async def _post(ll: Any, provider: str, model: str, url: str, body: Any, headers: Any, timeout: Any) -> Any:
    import httpx
    from litellm.llms.custom_httpx.http_handler import get_async_httpx_client
    from litellm.llms.openai.common_utils import OpenAIError

    client = get_async_httpx_client(llm_provider=provider)
    try:
        return await client.post(url, content=orjson.dumps(body), headers=headers, timeout=timeout, stream=True)
    except ll.Timeout:
        raise
    except httpx.HTTPStatusError as exc:
        status, text = exc.response.status_code, _body_text(exc)
        try:
            parsed: Any = orjson.loads(text)
        except orjson.JSONDecodeError:
            parsed = text
        inner = parsed.get("error") if isinstance(parsed, dict) else None
        error = OpenAIError(
            status_code=status,
            message=text,
            headers=exc.response.headers,
            response=exc.response,
            body=inner if isinstance(inner, dict) else None,
        )
    except httpx.HTTPError as exc:
        error = OpenAIError(status_code=500, message="Connection error.")
        error.__cause__ = exc
    raise _mapped(ll, provider, model, error)


def _body_text(exc: Any) -> str:
    """The error body as text (litellm's handler read it into the response; its masked copy may be a bytes repr)."""
    try:
        text = exc.response.text
    except Exception:  # noqa: BLE001 - a body that cannot be decoded: litellm's masked copy
        text = ""
    return str(text or getattr(exc, "text", None) or "")


def _mapped(ll: Any, provider: str, model: str, error: Exception) -> Exception:
    from litellm.litellm_core_utils.exception_mapping_utils import exception_type

    try:
        exception_type(  # type: ignore[no-untyped-call]
            model=model, custom_llm_provider=provider, original_exception=error, completion_kwargs={}, extra_kwargs={}
        )
    except Exception as mapped:  # noqa: BLE001 - exception_type always raises the mapped exception
        mapped.__cause__ = mapped.__cause__ or error  # the provider's own response, for engine.provider.errors
        return mapped
    return error  # pragma: no cover - exception_type never returns


def _mid_stream(ll: Any, provider: str, model: str, exc: Exception, partial: str, first: bool) -> Exception:
    """What litellm's stream wrapper raises for a failure while reading (``engine.provider.end_markers.cut_short``)."""
    message = None
    if isinstance(exc, StreamErrorEvent):
        message = f"The provider sent an error in the stream: {str(exc) or type(exc).__name__}"
    return cut_short(ll, provider, model, exc, partial, first, message)
