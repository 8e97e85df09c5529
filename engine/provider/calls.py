"""The provider adapter: one streaming chat completion through ``litellm.acompletion``.

Guarantees:
- ``max_retries=0`` and ``num_retries=0``: litellm and the OpenAI SDK never re-send on their own, so every
  HTTP request the engine makes has its own request_id (docs/architecture.md, facts about the stack).
- Usage is requested (``stream_options.include_usage``) and read from the final chunk when the provider sends it
  (``usage``, with reasoning and prompt-cache counts); what the provider reported before the end is read as it
  arrives (``reported``: Anthropic's ``message_start``, Gemini's ``usageMetadata``), from the chunks litellm's
  stream keeps, which carry the usage its wrapper holds back until the last chunk.
- A stream that ends without its provider's end marker (Anthropic's ``message_stop``, Gemini's ``finishReason``,
  Ollama's ``done``: ``engine.provider.end_markers``) raises litellm's ``MidStreamFallbackError`` at its end: cut, not
  finished, however cleanly the HTTP body ended (litellm's wrapper would end it with ``stop``).
- ``ProviderStream.aclose()`` closes the HTTP stream; callers call it in a ``finally`` on every path.
- Text and reasoning deltas come out as ``Delta``, pieces of streamed tool calls as ``ToolPiece`` (grouped by
  ``index``: the id and name come only with a call's first piece); empty deltas are skipped.
- Tools are offered with ``tools=`` only when there are any.
- ``public_params`` never holds a secret: no key, no headers, and ``api_base`` with its credentials redacted
  (``user:password@`` and secret query values); the real URL is used for the requests only.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal

from engine.offline import imported, litellm
from engine.provider.end_markers import NO_END, EndWatch, cut_short
from engine.provider.preset_request import AppliedPreset
from engine.provider.url_credentials import split_credentials
from engine.redaction import redact_url
from ledger.events import Param, Usage


@dataclass(frozen=True, slots=True)
class Delta:
    text: str
    block: Literal["text", "reasoning"] = "text"


@dataclass(frozen=True, slots=True)
class ToolPiece:
    """A piece of a tool call the model is writing: ``call_id`` and ``name`` only on a call's first piece."""

    index: int
    arguments: str = ""
    call_id: str | None = None
    name: str | None = None


def tool_piece(call: Any) -> ToolPiece:
    """One tool-call piece of a litellm delta (its ``ChatCompletionDeltaToolCall``) as the engine's."""
    function = getattr(call, "function", None)
    return ToolPiece(
        index=int(getattr(call, "index", 0) or 0),
        arguments=getattr(function, "arguments", None) or "",
        call_id=getattr(call, "id", None) or None,
        name=getattr(function, "name", None) or None,
    )


@dataclass(frozen=True, kw_only=True)
class ProviderConfig:
    """Where and how to call the model. ``api_key`` is never written to the ledger, logs or the page."""

    model: str
    api_base: str | None = None
    api_key: str | None = field(default=None, repr=False)
    temperature: float | None = None
    max_tokens: int | None = None
    http_timeout: float = 120.0
    top_p: float | None = None
    reasoning_effort: str | None = None  # sent only when litellm says the model takes it
    preset: AppliedPreset | None = None  # the agent preset version it runs with (``engine.commands.presets``)

    @property
    def preset_key(self) -> tuple[str, int] | None:
        return self.preset.key if self.preset is not None else None

    def public_params(self) -> tuple[Param, ...]:
        """Request parameters safe to record: never the key, never headers."""
        params: list[Param] = [Param(name="stream", value=True)]
        if self.api_base:
            params.append(Param(name="api_base", value=redact_url(self.api_base)))
        if self.temperature is not None:
            params.append(Param(name="temperature", value=self.temperature))
        if self.max_tokens is not None:
            params.append(Param(name="max_tokens", value=self.max_tokens))
        if self.top_p is not None:
            params.append(Param(name="top_p", value=self.top_p))
        if self.reasoning_effort is not None and takes_reasoning(self.model):
            params.append(Param(name="reasoning_effort", value=self.reasoning_effort))
        return tuple(params)


#: litellm providers whose chat completions stream OpenAI's SSE chunks unchanged (``engine.provider.light_route``'s).
COMPATIBLE = frozenset({"openai", "hosted_vllm", "custom_openai"})
KEEP_CHUNKS_EVERY = 16


class ProviderStream:
    """Deltas of one HTTP response; ``finish_reason`` and ``usage`` are known once it is exhausted.

    litellm's stream keeps every chunk object (``chunks``) to rebuild a whole response for its logging callbacks,
    which are off here: every ``KEEP_CHUNKS_EVERY`` chunks all but the last two (its repetition check reads those)
    are let go, so an answer of any length holds a handful of chunk objects (not one per chunk), litellm's
    end-of-stream rebuild has almost nothing to do, and the garbage collector's full passes stay short."""

    def __init__(self, response: Any, ends: EndWatch | None = None) -> None:
        self._response = response
        self._ends = ends or EndWatch()
        self._count = 0
        self._iter: AsyncIterator[Any] = response.__aiter__()
        self._queued: list[Delta | ToolPiece] = []
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self._partial: Usage | None = None
        self._looked = 0  # litellm's kept chunks already looked at for usage

    def __aiter__(self) -> ProviderStream:
        return self

    async def __anext__(self) -> Delta | ToolPiece:
        while True:
            if self._queued:
                return self._queued.pop(0)
            try:
                chunk = await self._iter.__anext__()
            except StopAsyncIteration:
                if self._ends.cut:  # the body ended without the provider's end marker: cut, not finished
                    raise self._cut_short() from None
                raise
            self._count += 1
            if self._count % KEEP_CHUNKS_EVERY == 0:
                self._let_go()
            usage = getattr(chunk, "usage", None)
            if usage is not None and getattr(usage, "completion_tokens", None) is not None:
                self.usage = read_usage(usage, partial=False)
            elif self.usage is None:
                self._look_for_usage()
            choices = getattr(chunk, "choices", None) or []
            if not choices:
                continue
            choice = choices[0]
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason
            delta = choice.delta
            if delta is None:
                continue
            reasoning = getattr(delta, "reasoning_content", None)
            if reasoning:
                self._queued.append(Delta(reasoning, "reasoning"))
            if delta.content:
                self._queued.append(Delta(delta.content))
            self._queued.extend(tool_piece(call) for call in getattr(delta, "tool_calls", None) or [])

    def _cut_short(self) -> Exception:
        ll, response = litellm(), self._response
        provider = str(getattr(response, "custom_llm_provider", None) or "provider")
        partial = str(getattr(response, "response_uptil_now", "") or "")
        model = str(getattr(response, "model", "") or "")
        return cut_short(ll, provider, model, ConnectionResetError(NO_END), partial, self._count == 0)

    @property
    def reported(self) -> Usage | None:
        """What the provider reported so far: its final usage, else the prompt side it sent before the end."""
        return self.usage or self._partial

    async def aclose(self) -> None:
        await self._response.aclose()

    def _look_for_usage(self) -> None:
        kept = getattr(self._response, "chunks", None)
        if not isinstance(kept, list) or len(kept) <= self._looked:
            return
        for chunk in reversed(kept[self._looked :]):  # the latest report counts
            usage = getattr(chunk, "usage", None)
            if usage is not None and getattr(usage, "prompt_tokens", None):
                self._partial = read_usage(usage, partial=True)
                break
        self._looked = len(kept)

    def _let_go(self) -> None:
        kept = getattr(self._response, "chunks", None)
        if isinstance(kept, list) and len(kept) > 2:
            if self.usage is None:
                self._look_for_usage()
            del kept[:-2]
            self._looked = len(kept)


def read_usage(usage: Any, *, partial: bool) -> Usage:
    """litellm's usage object as the ledger's; ``partial``: only its prompt side counts (see ``Usage``)."""
    prompt = getattr(usage, "prompt_tokens_details", None)
    completion = getattr(usage, "completion_tokens_details", None)
    written = getattr(prompt, "cache_creation_tokens", None) or getattr(usage, "cache_creation_input_tokens", 0)
    return Usage(
        input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        output_tokens=0 if partial else int(getattr(usage, "completion_tokens", 0) or 0),
        cached_tokens=int(getattr(prompt, "cached_tokens", 0) or 0),
        cache_write_tokens=int(written or 0),
        reasoning_tokens=0 if partial else int(getattr(completion, "reasoning_tokens", 0) or 0),
        partial=partial,
    )


async def open_stream(
    config: ProviderConfig, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
) -> ProviderStream:
    """Send the request; raise litellm's exception for errors the provider reports before streaming. Where litellm's
    wrapper sends the request only at the first read (its ``make_call``, Gemini's), the provider iterator is watched
    when it is made; either way from its first raw chunk (``EndWatch``), and the wrapper's error handling stays its
    own."""
    response = await litellm().acompletion(**request_kwargs(config, messages, tools))
    ends, provider = EndWatch(), getattr(response, "custom_llm_provider", None)
    make_call = getattr(response, "make_call", None)
    if getattr(response, "completion_stream", None) is not None:
        ends.attach(provider, response.completion_stream)
    elif make_call is not None:

        async def watched_call(**kwargs: Any) -> Any:
            iterator = await make_call(**kwargs)
            ends.attach(provider, iterator)
            return iterator

        response.make_call = watched_call
    return ProviderStream(response, ends)


def request_kwargs(
    config: ProviderConfig, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The arguments of the ``litellm.acompletion`` call for ``config`` (every route sends these)."""
    kwargs: dict[str, Any] = {
        "model": config.model,
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_retries": 0,
        "num_retries": 0,
        "timeout": config.http_timeout,
    }
    if config.api_base:
        kwargs["api_base"], basic = split_credentials(config.api_base)  # never user:password@ in the URL called
        if basic is not None:
            kwargs["extra_headers"] = {"Authorization": basic}
            if not config.api_key and _bearer_provider(config):  # litellm's OpenAI client wants some key to start
                kwargs["api_key"] = "basic-auth-from-api-base"  # never sent: the Basic header takes its place
    if config.api_key:
        kwargs["api_key"] = config.api_key
    if config.temperature is not None:
        kwargs["temperature"] = config.temperature
    if config.max_tokens is not None:
        kwargs["max_tokens"] = config.max_tokens
    if config.top_p is not None:
        kwargs["top_p"] = config.top_p
    if config.reasoning_effort is not None and takes_reasoning(config.model):
        kwargs["reasoning_effort"] = config.reasoning_effort
    if tools:
        kwargs["tools"] = tools
    return kwargs


def _bearer_provider(config: ProviderConfig) -> bool:
    """Whether ``config``'s provider puts its key in ``Authorization`` (the OpenAI-compatible ones)."""
    try:
        return litellm().get_llm_provider(config.model, api_base=config.api_base)[1] in COMPATIBLE
    except Exception:  # noqa: BLE001 - a model litellm cannot route fails later, in litellm's words
        return False


def takes_reasoning(model: str) -> bool:
    """Whether litellm's model map (or ``--model-info``) says ``model`` takes a reasoning effort."""
    try:
        return bool(litellm().supports_reasoning(model=model))
    except Exception:  # noqa: BLE001 - litellm raises several types for a model it does not know
        return False


#: The providers whose APIs continue a bare trailing assistant message (Anthropic's prefill). Mistral and DeepSeek
#: also take a prefill, but only marked ``prefix: true``, and with that mark litellm's Anthropic path repeats the
#: prefix in the answer: those get the request to continue instead (``ledger.continuation_history``).
BARE_PREFILL = frozenset({"anthropic", "vertex_ai", "bedrock"})


def takes_prefill(model: str) -> bool:
    """Whether a continuation (Continue) of ``model`` sends its prefix as the last message, for the model to go on
    from (``ledger.continuation_history``): litellm's model map says it takes an assistant prefill and its provider
    takes it bare (``BARE_PREFILL``). Never waits for litellm's import (a model call has awaited it:
    ``engine.offline.ready``); False before it."""
    module = imported()
    if module is None:
        return False
    try:
        bare = module.get_llm_provider(model)[1] in BARE_PREFILL
        return bare and bool(module.utils.supports_assistant_prefill(model))
    except Exception:  # noqa: BLE001 - litellm raises several types for a model it does not know
        return False
