"""The light route for OpenAI-compatible providers against litellm's plain route, on the same real upstream.

Each scenario runs the same request both ways (``LEDGER_CHAT_STREAM_ROUTE=litellm`` forces the plain route) and
asserts that what the engine gets is the same: the deltas, tool pieces, finish reason and usage; the exception
type, its HTTP status and the failure the ledger would record; one request per call; and the upstream closed when
the stream is closed or its task cancelled.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from engine.offline import litellm
from engine.provider.calls import ProviderConfig, ProviderStream
from engine.provider.light_route import PROVIDER, ROUTE_VARIABLE, LightStream
from engine.provider.routes import open_stream, route_of
from tests.support.both_routes import ASK, ROUTES, TOOLS, failure_of, failures_by_both, read_all, use
from tests.support.engine import TEST_KEY
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream
from tests.support.waiting import wait_until


def config(upstream: ScriptedUpstream, model: str = "openai/test-model") -> ProviderConfig:
    return ProviderConfig(model=model, api_base=upstream.base_url, api_key=TEST_KEY)


def test_openai_compatible_models_take_the_light_route_and_the_variable_forces_the_plain_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    litellm()
    base = "http://127.0.0.1:9/v1"
    for model in ("openai/gpt-4o-mini", "hosted_vllm/qwen", "custom_openai/local"):
        assert route_of(ProviderConfig(model=model, api_base=base)) == "openai", model
    for model in ("anthropic/claude-3-5-haiku", "ollama_chat/llama3", "gemini/gemini-2.0-flash"):
        assert route_of(ProviderConfig(model=model, api_base=base)) == "native", model  # test_native_route
    monkeypatch.setenv(ROUTE_VARIABLE, "litellm")
    assert route_of(ProviderConfig(model="openai/gpt-4o-mini", api_base=base)) == "plain"


@pytest.mark.parametrize("model", ["openai/test-model", "hosted_vllm/test-model", "custom_openai/test-model"])
async def test_text_reasoning_tool_pieces_and_usage_arrive_the_same_by_both_routes(
    upstream: ScriptedUpstream, monkeypatch: pytest.MonkeyPatch, model: str
) -> None:
    calls = [PlannedCall("lookup", '{"q": "alpha beta"}', "call_a", 3), PlannedCall("lookup", '{"q": 2}', "call_b", 2)]
    behavior = Behavior(reasoning="think it over", text="Two calls now.", tool_calls=calls, chunk_delay=0)
    got = {}
    for route in ROUTES:
        use(route, monkeypatch)
        upstream.reset()
        upstream.plan(behavior)
        got[route] = await read_all(config(upstream, model), TOOLS)
        assert len(upstream.records) == 1 and upstream.last.finished
        assert upstream.last.model == model.split("/", 1)[1] and upstream.last.tools == ["lookup"]
    assert got["light"]["type"] is LightStream and got["litellm"]["type"] is ProviderStream
    light, plain = got["light"], got["litellm"]
    assert light["pieces"] == plain["pieces"]
    assert light["finish"] == plain["finish"] == "tool_calls"
    assert light["usage"] == plain["usage"] and light["usage"] is not None and light["usage"].reasoning_tokens == 3
    starts = [p for p in light["pieces"] if getattr(p, "call_id", None)]
    assert [(p.index, p.call_id, p.name) for p in starts] == [(0, "call_a", "lookup"), (1, "call_b", "lookup")]


async def test_every_light_request_is_one_litellm_acompletion_call(
    upstream: ScriptedUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    ll = litellm()
    seen: list[dict[str, Any]] = []
    real = ll.acompletion

    async def spy(**kwargs: Any) -> Any:
        seen.append(kwargs)
        return await real(**kwargs)

    monkeypatch.setattr(ll, "acompletion", spy)
    upstream.plan(Behavior(text="one two", chunk_delay=0))
    result = await read_all(config(upstream))
    assert [p.text for p in result["pieces"]] == ["one ", "two"]
    (call,) = seen
    assert call["model"] == f"{PROVIDER}/openai/test-model" and call["max_retries"] == 0 and call["stream"] is True
    assert call["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("status", [400, 401, 429, 500])
async def test_an_http_error_raises_the_same_litellm_exception_by_both_routes(
    upstream: ScriptedUpstream, monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    got = await failures_by_both(upstream, monkeypatch, Behavior(status=status), config(upstream))
    (light, light_failure), (plain, plain_failure) = got["light"], got["litellm"]
    assert type(light) is type(plain) and light.status_code == plain.status_code == status
    assert light_failure == plain_failure


@pytest.mark.parametrize(
    "behavior",
    [Behavior(text="a b c d e f g h", drop_after=3), Behavior(text="a b c d e f g h", malformed_after=3)],
    ids=["drop", "malformed"],
)
async def test_a_failure_mid_stream_is_the_same_failure_by_both_routes(
    upstream: ScriptedUpstream, monkeypatch: pytest.MonkeyPatch, behavior: Behavior
) -> None:
    got = await failures_by_both(upstream, monkeypatch, behavior, config(upstream))
    (light, light_failure), (plain, plain_failure) = got["light"], got["litellm"]
    assert type(light) is type(plain)
    assert (light_failure.error_type, light_failure.retryable) == (plain_failure.error_type, plain_failure.retryable)
    assert light.generated_content == plain.generated_content == "a b c "


async def test_a_refused_connection_is_the_same_failure_by_both_routes(monkeypatch: pytest.MonkeyPatch) -> None:
    litellm()
    refused = ProviderConfig(model="openai/test-model", api_base="http://127.0.0.1:9/v1", api_key=TEST_KEY)
    got = {}
    for route in ROUTES:
        use(route, monkeypatch)
        got[route] = await failure_of(refused)
    assert type(got["light"][0]) is type(got["litellm"][0])
    assert got["light"][1] == got["litellm"][1]


async def test_closing_the_light_stream_mid_answer_closes_the_upstream(upstream: ScriptedUpstream) -> None:
    upstream.plan(Behavior(text="word " * 200, chunk_delay=0.02))
    stream = await open_stream(config(upstream), ASK)
    assert isinstance(stream, LightStream)
    await anext(stream)
    await stream.aclose()
    await wait_until(lambda: upstream.last.disconnected_at is not None, 2.0, "the upstream saw the disconnect")
    assert not upstream.last.finished and upstream.last.chunks_sent < 200


async def test_cancelling_before_the_first_chunk_closes_the_upstream(upstream: ScriptedUpstream) -> None:
    upstream.plan(Behavior(text="late words", first_delay=5.0))
    task = asyncio.ensure_future(open_stream(config(upstream), ASK))
    await wait_until(lambda: upstream.records, 5.0, "the request reached the upstream")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_until(lambda: upstream.last.disconnected_at is not None, 2.0, "the upstream saw the disconnect")
