"""The light route for Anthropic, Gemini and Ollama against litellm's plain route, on the same real upstream.

Each scenario runs the same request both ways (``LEDGER_CHAT_STREAM_ROUTE=litellm`` forces the plain route) in each
dialect and asserts that what the engine gets is the same: the text and reasoning deltas, the whole tool calls
(name, an id, arguments), the finish reason and usage, the usage reported before a Stop; the exception type, its
HTTP status and the failure the ledger would record, for an error status and for a stream cut or broken midway;
one request per call; and the upstream closed when the stream is closed or its task cancelled.
"""

from __future__ import annotations

import asyncio

import pytest

from engine.offline import litellm
from engine.provider.calls import Delta, ProviderConfig, ProviderStream, ToolPiece
from engine.provider.light_route import ROUTE_VARIABLE
from engine.provider.native_route import NativeStream
from engine.provider.routes import open_stream, route_of
from tests.support.both_routes import ASK, ROUTES, TOOLS, failures_by_both, read_all, use
from tests.support.dialects import MODELS, OVERLOADED, provider
from tests.support.engine import TEST_KEY
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream
from tests.support.waiting import wait_until

NATIVE_DIALECTS = ("anthropic", "gemini", "ollama")
WORDS = " ".join(f"w{n}" for n in range(120))
CUT = "alpha bravo charlie delta echo foxtrot golf hotel"
BREAKS = {
    "incomplete": Behavior(text=CUT, drop_after=3, input_tokens=555),
    "clean": Behavior(text=CUT, drop_after=3, drop_how="clean"),
    "reset": Behavior(text=CUT, drop_after=3, drop_how="reset"),
    "malformed": Behavior(text=CUT, malformed_after=3),
    "error event": Behavior(text=CUT, error_after=3, message="Overloaded right now"),
}


def whole_calls(pieces: list[Delta | ToolPiece]) -> list[tuple[str | None, bool, str]]:
    """Each tool call as the engine assembles it: its name, whether it has an id, its arguments (a piece with an id
    starts a call, the others go on the latest call at their index: Ollama sends every call whole, at index 0)."""
    calls: list[list[ToolPiece]] = []
    latest: dict[int, list[ToolPiece]] = {}
    for piece in pieces:
        if isinstance(piece, ToolPiece):
            if piece.call_id is not None or piece.index not in latest:
                latest[piece.index] = []
                calls.append(latest[piece.index])
            latest[piece.index].append(piece)
    return [(parts[0].name, bool(parts[0].call_id), "".join(p.arguments for p in parts)) for parts in calls]


def test_anthropic_gemini_and_ollama_chat_take_the_native_route_unless_the_variable_says_litellm(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    litellm()
    base = "http://127.0.0.1:9"
    for model in MODELS.values():
        route = route_of(ProviderConfig(model=model, api_base=base))
        assert route == ("openai" if model.startswith("openai/") else "native"), model
    assert route_of(ProviderConfig(model="ollama/llama3", api_base=base)) == "plain"  # /api/generate: see the module
    monkeypatch.setenv(ROUTE_VARIABLE, "litellm")
    assert {route_of(ProviderConfig(model=model, api_base=base)) for model in MODELS.values()} == {"plain"}


@pytest.mark.parametrize("dialect", NATIVE_DIALECTS)
async def test_text_reasoning_whole_tool_calls_finish_and_usage_arrive_the_same_by_both_routes(
    upstream: ScriptedUpstream, monkeypatch: pytest.MonkeyPatch, dialect: str
) -> None:
    calls = [PlannedCall("lookup", '{"q": "alpha beta"}', "call_a", 3), PlannedCall("lookup", '{"q": 2}', "call_b", 2)]
    behavior = Behavior(
        reasoning="think it over", text="Two calls now.", tool_calls=calls, input_tokens=40, cached_tokens=30,
        chunk_delay=0.001,
    )  # fmt: skip
    got = {}
    for route in ROUTES:
        use(route, monkeypatch)
        upstream.reset()
        upstream.plan(behavior)
        got[route] = await read_all(provider(dialect, upstream, TEST_KEY), TOOLS)
        assert len(upstream.records) == 1 and upstream.last.finished and upstream.last.dialect == dialect
    light, plain = got["light"], got["litellm"]
    assert light["type"] is NativeStream and plain["type"] is ProviderStream
    deltas = [[p for p in got[r]["pieces"] if isinstance(p, Delta)] for r in ROUTES]
    assert deltas[0] == deltas[1] and {d.block for d in deltas[0]} == {"text", "reasoning"}
    assert whole_calls(light["pieces"]) == whole_calls(plain["pieces"])
    assert [(name, has_id) for name, has_id, _ in whole_calls(light["pieces"])] == [("lookup", True)] * 2
    assert light["finish"] == plain["finish"] == "tool_calls"
    assert light["usage"] == plain["usage"] and light["usage"] is not None and light["usage"].input_tokens == 40
    assert light["usage"].reasoning_tokens > 0


@pytest.mark.parametrize("dialect", NATIVE_DIALECTS)
async def test_what_was_reported_before_a_stop_is_the_same_by_both_routes(
    upstream: ScriptedUpstream, monkeypatch: pytest.MonkeyPatch, dialect: str
) -> None:
    reported = {}
    for route in ROUTES:
        use(route, monkeypatch)
        upstream.plan(Behavior(text=WORDS, input_tokens=321, cached_tokens=100, chunk_delay=0.01))
        stream = await open_stream(provider(dialect, upstream, TEST_KEY), ASK)
        try:
            for _ in range(5):
                await anext(stream)
            reported[route] = stream.reported
        finally:
            await stream.aclose()
    assert reported["light"] == reported["litellm"]
    if dialect in ("anthropic", "gemini"):  # Ollama reports only in its last chunk
        assert reported["light"] is not None and reported["light"].input_tokens == 321 and reported["light"].partial


@pytest.mark.parametrize(
    ("dialect", "status"), [(d, s) for d in NATIVE_DIALECTS for s in (400, 401, 429, OVERLOADED[d])]
)
async def test_an_http_error_raises_the_same_litellm_exception_by_both_routes(
    upstream: ScriptedUpstream, monkeypatch: pytest.MonkeyPatch, dialect: str, status: int
) -> None:
    got = await failures_by_both(
        upstream,
        monkeypatch,
        Behavior(status=status, message=f"injected {status}"),
        provider(dialect, upstream, TEST_KEY),
    )
    (light, light_failure), (plain, plain_failure) = got["light"], got["litellm"]
    assert type(light) is type(plain) and light.status_code == plain.status_code
    assert type(getattr(light, "original_exception", None)) is type(getattr(plain, "original_exception", None))
    assert light_failure == plain_failure and light_failure.http_status == status


@pytest.mark.parametrize("how", BREAKS)
@pytest.mark.parametrize("dialect", NATIVE_DIALECTS)
async def test_a_stream_cut_or_broken_midway_is_the_same_failure_by_both_routes(
    upstream: ScriptedUpstream, monkeypatch: pytest.MonkeyPatch, dialect: str, how: str
) -> None:
    got = await failures_by_both(upstream, monkeypatch, BREAKS[how], provider(dialect, upstream, TEST_KEY))
    (light, light_failure), (plain, plain_failure) = got["light"], got["litellm"]
    assert type(light) is type(plain)
    assert type(getattr(light, "original_exception", None)) is type(getattr(plain, "original_exception", None))
    assert (light_failure.error_type, light_failure.retryable) == (plain_failure.error_type, plain_failure.retryable)
    assert getattr(light, "generated_content", None) == getattr(plain, "generated_content", None)


@pytest.mark.parametrize("dialect", NATIVE_DIALECTS)
async def test_closing_the_native_stream_mid_answer_closes_the_upstream(
    upstream: ScriptedUpstream, dialect: str
) -> None:
    upstream.plan(Behavior(text="word " * 200, chunk_delay=0.02))
    stream = await open_stream(provider(dialect, upstream, TEST_KEY), ASK)
    assert isinstance(stream, NativeStream)
    await anext(stream)
    await stream.aclose()
    await wait_until(lambda: upstream.last.disconnected_at is not None, 2.0, "the upstream saw the disconnect")
    assert not upstream.last.finished and upstream.last.chunks_sent < 200


@pytest.mark.parametrize("dialect", NATIVE_DIALECTS)
async def test_cancelling_before_the_first_chunk_closes_the_upstream(upstream: ScriptedUpstream, dialect: str) -> None:
    upstream.plan(Behavior(text="late words", first_delay=5.0))
    task = asyncio.ensure_future(read_all(provider(dialect, upstream, TEST_KEY)))
    await wait_until(lambda: upstream.records, 5.0, "the request reached the upstream")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_until(lambda: upstream.last.disconnected_at is not None, 2.0, "the upstream saw the disconnect")
