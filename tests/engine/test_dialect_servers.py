"""The scripted upstream speaks each provider's dialect through litellm's real HTTP path, and refuses, with that
provider's 400 and its words, a history the provider would refuse: the engine suite's "history accepted" means
something in every dialect."""

from __future__ import annotations

from typing import Any

import pytest

from demo.dialects import anthropic, gemini, ollama
from engine.offline import litellm
from engine.provider.calls import Delta, ToolPiece, open_stream
from tests.support.dialects import DIALECTS, provider
from tests.support.engine import TEST_KEY
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream


def call(call_id: str, name: str = "calculator", arguments: str = '{"expression": "1+1"}') -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


ASKED = {"role": "user", "content": "compute 1+1"}
TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in ("calculator", "clock")
]
PAIRED = [
    ASKED,
    {"role": "assistant", "content": "Computing.", "tool_calls": [call("call_a")]},
    {"role": "tool", "tool_call_id": "call_a", "content": "2"},
    {"role": "user", "content": "thanks"},
]
#: For each dialect: a history its provider refuses (in OpenAI's shape, as the engine hands it to litellm), and
#: words of the provider's refusal.
BROKEN = {
    "openai": (
        [
            ASKED,
            {"role": "assistant", "content": None, "tool_calls": [call("call_a")]},
            {"role": "user", "content": "?"},
        ],
        "did not have response messages: call_a",
    ),
    "anthropic": (
        [
            ASKED,
            {"role": "assistant", "content": "Computing.", "tool_calls": [call("call_a")]},
            {"role": "user", "content": "?"},
        ],
        "`tool_use` ids were found without `tool_result` blocks immediately after: call_a",
    ),
    "gemini": (
        [
            ASKED,
            {"role": "assistant", "content": "Two.", "tool_calls": [call("call_a"), call("call_b", "clock", "{}")]},
            {"role": "tool", "tool_call_id": "call_a", "content": "2"},
            {"role": "user", "content": "?"},
        ],
        "number of function response parts is equal to the number of function call parts",
    ),
    "ollama": (
        [ASKED, {"role": "assistant", "content": "", "tool_calls": [call("call_a")]}, {"role": "user", "content": "?"}],
        "every tool call needs one tool message",
    ),
}


async def answer(dialect: str, upstream: ScriptedUpstream, messages: list[dict[str, Any]]) -> list[Delta | ToolPiece]:
    stream = await open_stream(provider(dialect, upstream, TEST_KEY), messages, TOOLS)
    try:
        return [piece async for piece in stream]
    finally:
        await stream.aclose()


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_history_the_provider_refuses_gets_its_400_and_a_paired_one_is_answered(
    dialect: str, upstream: ScriptedUpstream
) -> None:
    messages, words = BROKEN[dialect]
    with pytest.raises(litellm().BadRequestError, match=words.replace("(", r"\(").replace("`", ".")):
        await answer(dialect, upstream, messages)
    assert upstream.last.status == 400 and upstream.last.dialect == dialect
    upstream.plan(Behavior(text="you are welcome"))
    pieces = await answer(dialect, upstream, PAIRED)
    assert "".join(p.text for p in pieces if isinstance(p, Delta)) == "you are welcome"
    assert upstream.last.status == 200
    sent = upstream.last.messages
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "user"]
    assert sent[1]["tool_calls"][0]["function"]["name"] == "calculator" and sent[2]["content"] == "2"


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_one_behavior_streams_reasoning_text_and_a_whole_tool_call_in_every_dialect(
    dialect: str, upstream: ScriptedUpstream
) -> None:
    calls = [PlannedCall("calculator", '{"expression": "6*7"}', "call_q", pieces=4)]
    upstream.plan(Behavior(text="Let me compute.", reasoning="six sevens", tool_calls=calls, chunk_delay=0.001))
    pieces = await answer(dialect, upstream, [ASKED])
    deltas = [p for p in pieces if isinstance(p, Delta)]
    assert "".join(d.text for d in deltas if d.block == "reasoning") == "six sevens"
    assert "".join(d.text for d in deltas if d.block == "text") == "Let me compute."
    tool = [p for p in pieces if isinstance(p, ToolPiece)]
    assert tool[0].name == "calculator" and tool[0].call_id
    assert "".join(p.arguments for p in tool).replace(" ", "") == '{"expression":"6*7"}'
    assert upstream.last.finished


def test_anthropic_refuses_tool_results_that_do_not_come_first_and_results_for_no_tool_use() -> None:
    use = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "calculator", "input": {}}]}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "2"}
    text = {"type": "text", "text": "and?"}
    asked = {"role": "user", "content": "compute"}
    assert anthropic.history_problem([asked, use, {"role": "user", "content": [result, text]}]) is None
    late = anthropic.history_problem([asked, use, {"role": "user", "content": [text, result]}])
    assert late is not None and "must come first" in late
    orphan = anthropic.history_problem(
        [asked, {"role": "assistant", "content": "hi"}, {"role": "user", "content": [result]}]
    )
    assert orphan is not None and "unexpected `tool_use_id`" in orphan
    empty = anthropic.history_problem([asked, {"role": "assistant", "content": [{"type": "text", "text": ""}]}])
    assert empty is not None and "non-empty" in empty


def test_gemini_refuses_function_responses_that_do_not_match_the_calls() -> None:
    call = {"role": "model", "parts": [{"functionCall": {"name": "calculator", "args": {}}}]}
    asked = {"role": "user", "parts": [{"text": "compute"}]}

    def answered(name: str) -> dict[str, Any]:
        return {"role": "user", "parts": [{"function_response": {"name": name, "response": {"content": "2"}}}]}

    assert gemini.history_problem([asked, call, answered("calculator")]) is None
    assert gemini.history_problem([asked, call, answered("clock")]) == gemini.NAMES
    assert gemini.history_problem([asked, answered("calculator")]) == gemini.AFTER
    assert gemini.history_problem([asked, {"role": "model", "parts": []}]) == gemini.EMPTY.format(i=1)


def test_ollama_refuses_tool_call_arguments_that_are_not_an_object() -> None:
    call = {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": '{"a": 1}'}}]}
    problem = ollama.history_problem([{"role": "user", "content": "x"}, call, {"role": "tool", "content": "1"}])
    assert problem == ollama.UNMARSHAL
