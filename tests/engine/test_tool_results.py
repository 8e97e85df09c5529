"""Whole tool results: the demo MCP server over stdio returns images, audio, embedded resources, links and
structured content; the ledger keeps every part (binary bytes in the blob store), and what the model is sent for
them goes through litellm's real HTTP path to the scripted upstream in the provider's own dialect, which records
the body it received (``RequestRecord.raw``)."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

import pytest

from engine.commands.engine import Engine
from engine.offline import litellm
from engine.tools.hub import ToolHub
from engine.tools.result_parts import history_messages, tool_followups, tool_messages
from ledger.events.core import ToolResult
from ledger.history import model_history
from tests.support.dialects import MODELS, api_base
from tests.support.engine import TEST_KEY, EngineFactory, current_attempt
from tests.support.tool_turns import results
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream
from tests.support.waiting import wait_until

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def tool_turn(engine: Engine, upstream: ScriptedUpstream, *calls: PlannedCall) -> str:
    """A turn in which the model calls these tools, then answers; the conversation's id."""
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="Let me look.", tool_calls=list(calls)), Behavior(text="Done."))
    _, message_id = await engine.submit(cid, "show me")
    await wait_until(lambda: not engine.is_streaming(cid), 20, "the turn to end")
    assert current_attempt(engine, cid, message_id).status == "complete"
    return cid


async def send_through_litellm(upstream: ScriptedUpstream, dialect: str, model: str, messages: list[dict]) -> dict:
    """One streamed request through litellm to the upstream in ``dialect`` (a next question after ``messages``); the
    body the upstream received."""
    upstream.plan(Behavior(text="I see it."))
    stream = await litellm().acompletion(
        model=model,
        messages=[*messages, {"role": "user", "content": "and?"}],
        api_base=api_base(dialect, upstream),
        api_key=TEST_KEY,
        stream=True,
        max_retries=0,
        max_tokens=100,
    )
    try:
        text = "".join([chunk.choices[0].delta.content or "" async for chunk in stream])
    finally:
        await stream.aclose()
    assert upstream.last.status == 200 and upstream.last.dialect == dialect, upstream.last
    assert text == "I see it."
    return upstream.last.raw


def image_part(result: ToolResult) -> Any:
    (image,) = [p for p in result.parts if p.kind == "image"]
    return image


async def test_an_image_result_is_kept_as_a_part_with_its_bytes_in_the_blob_store(
    hub_engines: EngineFactory, upstream: ScriptedUpstream, hub: ToolHub
) -> None:
    engine = hub_engines(tools=hub)
    cid = await tool_turn(engine, upstream, PlannedCall("draw_chart", '{"title": "Load"}', "call_img"))
    result = results(engine, cid)["call_img"]
    image = image_part(result)
    data = hub.blobs.get(image.sha256)
    assert data is not None and data.startswith(b"\x89PNG") and hashlib.sha256(data).hexdigest() == image.sha256
    assert (image.media_type, image.width, image.height, image.size) == ("image/png", 320, 200, len(data))
    assert result.parts[0].kind == "text" and "bar chart titled 'Load'" in (result.parts[0].text or "")
    assert f"[image, 320×200 PNG, {round(len(data) / 1024)} KB, shown to the user]" in result.content
    assert json.loads(result.structured or "")["values"]["Fri"] == 22
    tool_message = next(m for m in upstream.records[-1].messages if m["role"] == "tool")
    assert "[image, 320×200 PNG" in tool_message["content"]  # the next step read the description at least
    call = engine.conversation(cid).attempts[result.attempt_id].tool_calls["call_img"]
    assert call.parts == result.parts and call.structured == result.structured  # the reducer kept them


async def test_anthropic_gets_the_image_inside_the_tool_result(
    hub_engines: EngineFactory, upstream: ScriptedUpstream, hub: ToolHub
) -> None:
    engine = hub_engines(tools=hub)
    cid = await tool_turn(engine, upstream, PlannedCall("draw_chart", "{}", "call_a"))
    sha = image_part(results(engine, cid)["call_a"]).sha256
    model = "anthropic/claude-sonnet-4-5"
    messages = history_messages(model_history(engine.conversation(cid)), model, hub.blobs.get)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]  # no extra user message
    raw = await send_through_litellm(upstream, "anthropic", model, messages)
    blocks = [b for m in raw["messages"] for b in m["content"] if isinstance(b, dict) and b["type"] == "tool_result"]
    (tool_result,) = blocks
    assert tool_result["tool_use_id"] == "call_a"
    kinds = [b["type"] for b in tool_result["content"]]
    assert kinds == ["text", "image"]
    assert "[image, 320×200 PNG" in tool_result["content"][0]["text"]
    source = tool_result["content"][1]["source"]
    assert (source["type"], source["media_type"]) == ("base64", "image/png")
    assert hashlib.sha256(base64.b64decode(source["data"])).hexdigest() == sha  # the very bytes the tool returned


async def test_openai_gets_text_and_a_description_then_one_user_message_with_the_images_after_all_tool_messages(
    hub_engines: EngineFactory, upstream: ScriptedUpstream, hub: ToolHub
) -> None:
    engine = hub_engines(tools=hub)
    calls = [PlannedCall("draw_chart", "{}", "call_o1"), PlannedCall("notes_file", "{}", "call_o2")]
    cid = await tool_turn(engine, upstream, *calls)
    sha = image_part(results(engine, cid)["call_o1"]).sha256
    model = "openai/gpt-4o"  # litellm knows it takes images
    messages = history_messages(model_history(engine.conversation(cid)), model, hub.blobs.get)
    raw = await send_through_litellm(upstream, "openai", model, messages)
    sent = raw["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "tool", "user", "assistant", "user"]
    first, second, images = sent[2], sent[3], sent[4]
    assert isinstance(first["content"], str) and "[image, 320×200 PNG" in first["content"]
    assert "[link: file:///demo/notes.md (Demo notes)]" in second["content"]
    urls = [p["image_url"]["url"] for p in images["content"] if p["type"] == "image_url"]
    (url,) = urls
    assert url.startswith("data:image/png;base64,")
    assert hashlib.sha256(base64.b64decode(url.split(",", 1)[1])).hexdigest() == sha
    assert "call_o1" in json.dumps(images["content"][:2])


async def test_a_model_litellm_does_not_know_to_see_images_gets_the_description_only(
    hub_engines: EngineFactory, upstream: ScriptedUpstream, hub: ToolHub
) -> None:
    engine = hub_engines(tools=hub)
    cid = await tool_turn(engine, upstream, PlannedCall("draw_chart", "{}", "call_n"))
    messages = history_messages(model_history(engine.conversation(cid)), "openai/test-model", hub.blobs.get)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    raw = await send_through_litellm(upstream, "openai", "openai/test-model", messages)
    assert "[image, 320×200 PNG" in raw["messages"][2]["content"] and "image_url" not in json.dumps(raw)


async def test_an_embedded_resource_and_a_resource_link_reach_the_model_as_text(
    hub_engines: EngineFactory, upstream: ScriptedUpstream, hub: ToolHub
) -> None:
    engine = hub_engines(tools=hub)
    cid = await tool_turn(engine, upstream, PlannedCall("notes_file", "{}", "call_r"))
    result = results(engine, cid)["call_r"]
    resource, link = (p for p in result.parts if p.kind in ("resource", "resource_link"))
    assert (resource.uri, resource.media_type) == ("file:///demo/notes.md", "text/markdown")
    assert (resource.text or "").startswith("# Retries\nRetry only what is safe to repeat")
    assert (link.kind, link.uri, link.name) == ("resource_link", "file:///demo/notes.md", "Demo notes")
    tool_message = next(m for m in upstream.records[-1].messages if m["role"] == "tool")
    assert "[resource file:///demo/notes.md, text/markdown: # Retries\nRetry only" in tool_message["content"]
    assert "[link: file:///demo/notes.md (Demo notes)]" in tool_message["content"]
    messages = history_messages(model_history(engine.conversation(cid)), "anthropic/claude-sonnet-4-5", hub.blobs.get)
    raw = await send_through_litellm(upstream, "anthropic", "anthropic/claude-sonnet-4-5", messages)
    assert "Retry only what is safe to repeat" in json.dumps(
        raw
    ) and "file:///demo/notes.md (Demo notes)" in json.dumps(raw)


async def test_audio_is_kept_described_and_heard_by_gemini_and_an_image_gone_from_the_store_is_said_to_be(
    hub_engines: EngineFactory, upstream: ScriptedUpstream, hub: ToolHub
) -> None:
    engine = hub_engines(tools=hub)
    cid = await tool_turn(
        engine, upstream, PlannedCall("beep", "{}", "call_b"), PlannedCall("draw_chart", "{}", "call_g")
    )
    audio = next(p for p in results(engine, cid)["call_b"].parts if p.kind == "audio")
    assert audio.media_type == "audio/wav" and (hub.blobs.get(audio.sha256) or b"").startswith(b"RIFF")
    assert "[audio, audio/wav" in results(engine, cid)["call_b"].content
    gemini = history_messages(model_history(engine.conversation(cid)), MODELS["gemini"], hub.blobs.get)
    turns = (await send_through_litellm(upstream, "gemini", MODELS["gemini"], gemini))["contents"]
    inline = [p["inline_data"] for t in turns for p in t["parts"] if "inline_data" in p]
    assert [i["mime_type"] for i in inline] == ["audio/wav", "image/png"]  # litellm says Gemini hears and sees
    assert hashlib.sha256(base64.b64decode(inline[0]["data"])).hexdigest() == audio.sha256
    entries = model_history(engine.conversation(cid))
    (message,) = tool_messages(entries[3], "anthropic/claude-sonnet-4-5", lambda sha: None)
    assert message["tool_call_id"] == "call_g" and "no longer available" in message["content"]
    assert tool_followups(entries, "openai/gpt-4o", lambda sha: None) == []


async def test_gemini_gets_the_description_in_the_function_response_and_the_image_in_the_user_turn_after_it(
    hub_engines: EngineFactory, upstream: ScriptedUpstream, hub: ToolHub
) -> None:
    engine = hub_engines(tools=hub)
    cid = await tool_turn(engine, upstream, PlannedCall("draw_chart", "{}", "call_g1"))
    sha = image_part(results(engine, cid)["call_g1"]).sha256
    model = MODELS["gemini"]
    messages = history_messages(model_history(engine.conversation(cid)), model, hub.blobs.get)
    turns = (await send_through_litellm(upstream, "gemini", model, messages))["contents"]
    responses = [n for n, t in enumerate(turns) for p in t["parts"] if "function_response" in p]
    (where,) = responses
    response = turns[where]["parts"][0]["function_response"]["response"]["content"]
    assert "[image, 320×200 PNG" in response
    inline = [p["inline_data"] for p in turns[where + 1]["parts"] if "inline_data" in p]
    assert [i["mime_type"] for i in inline] == ["image/png"]
    assert hashlib.sha256(base64.b64decode(inline[0]["data"])).hexdigest() == sha


async def test_ollama_with_a_model_litellm_knows_without_vision_gets_the_description_only(
    hub_engines: EngineFactory, upstream: ScriptedUpstream, hub: ToolHub
) -> None:
    engine = hub_engines(tools=hub)
    cid = await tool_turn(engine, upstream, PlannedCall("draw_chart", "{}", "call_l1"))
    model = MODELS["ollama"]
    messages = history_messages(model_history(engine.conversation(cid)), model, hub.blobs.get)
    sent = (await send_through_litellm(upstream, "ollama", model, messages))["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "assistant", "user"]
    assert "[image, 320×200 PNG" in sent[2]["content"] and all(not m.get("images") for m in sent)
