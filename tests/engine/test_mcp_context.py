"""MCP prompts ("/" commands) and resources ("@" context) of two real SDK servers over stdio (the demo server and
``tests.support.context_server``): listed, fetched, stored by sha256 as attachments of a message, and sent through
litellm's real HTTP path to the scripted upstream, whose records show the very bytes on every Retry and Branch.
And a tool's PNG with a damaged ancillary chunk: shown (an image part) and sent re-encoded without metadata."""

from __future__ import annotations

import base64
import hashlib
import io
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from PIL import Image

from engine.commands.assembly import build_engine
from engine.commands.engine import Engine
from engine.files import FileLimits, Files, from_prompt, from_resource, models, retouch
from engine.files.png_chunks import damaged
from engine.provider.calls import ProviderConfig
from engine.tools import prompts, resources
from engine.tools.hub import ToolHub
from engine.turns.settings import EngineSettings, Limits
from store.tinydb.store import Store
from tests.support.engine import TEST_KEY
from tests.support.tool_turns import results
from tests.support.tools import demo_server_config, second_server_config
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream
from tests.support.waiting import wait_until

pytestmark = pytest.mark.asyncio(loop_scope="module")
VISION = "openai/lc-test-vision"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def both(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[ToolHub]:
    """The demo server and the second SDK server, started once; images of results re-encoded (as the app wires)."""
    folder = tmp_path_factory.mktemp("context-tools")
    hub = ToolHub((demo_server_config(folder / "record.jsonl"), second_server_config()), log_dir=folder / "logs")
    hub.retouch = retouch
    await hub.start()
    assert [h.state for h in hub.health()] == ["ready", "ready"], hub.health()
    yield hub
    await hub.stop()


@pytest_asyncio.fixture(loop_scope="module")
async def engine(tmp_path: Path, upstream: ScriptedUpstream, both: ToolHub) -> AsyncIterator[Engine]:
    models.declare({VISION: {"supports_vision": True}})
    store = Store.open(tmp_path / "data", flush_interval=0.05)
    settings = EngineSettings(
        provider=ProviderConfig(model=VISION, api_base=upstream.base_url, api_key=TEST_KEY),
        limits=Limits(first_chunk_timeout=5.0, idle_timeout=2.0, resend_backoff=0.05),
        files=Files(both.blobs, FileLimits.from_mb(1)),  # one blob store for files and results, as the app has
    )
    made = build_engine(store, settings, both)
    yield made
    await made.shutdown()
    store.close()


def user_parts(record: Any) -> list[dict[str, Any]]:
    users = [m for m in record.raw["messages"] if m.get("role") == "user"]
    content = users[-1]["content"]
    return content if isinstance(content, list) else [{"type": "text", "text": content}]


def image_bytes(record: Any) -> list[bytes]:
    found = []
    for message in record.raw["messages"]:
        for part in message["content"] if isinstance(message.get("content"), list) else []:
            if part.get("type") == "image_url":
                found.append(base64.b64decode(part["image_url"]["url"].split(",", 1)[1]))
    return found


async def answered(engine: Engine, cid: str) -> None:
    await wait_until(lambda: not engine.is_streaming(cid), 20, "the answer")


async def test_slash_lists_the_prompts_of_both_servers_with_their_arguments(both: ToolHub) -> None:
    listed = {(p.server, p.name): p for p in await prompts.prompts(both)}
    assert set(listed) >= {("demo", "summarize_notes"), ("demo", "standup"), ("second", "review"), ("second", "greet")}
    summarize = listed["demo", "summarize_notes"]
    assert summarize.title == "Summarize the notes" and "one section of the demo notes" in summarize.description
    assert [(a.name, a.required) for a in summarize.arguments] == [("topic", True), ("style", False)]
    assert await prompts.complete(both, "demo", ("prompt", "summarize_notes"), "topic", "ti") == ("timeouts",)
    assert await prompts.complete(both, "second", ("prompt", "review"), "language", "r") == ("rust",)
    template = ("template", "notes://demo/section/{topic}")
    assert await prompts.complete(both, "demo", template, "topic", "c") == ("caching", "circuit breakers")


async def test_a_prompt_with_arguments_fills_the_message_and_retry_and_branch_send_the_same_bytes(
    engine: Engine, upstream: ScriptedUpstream, both: ToolHub
) -> None:
    got = await prompts.get(both, "demo", "summarize_notes", {"topic": "retries", "style": "a table"})
    attached = await from_prompt(engine.files, "demo", "summarize_notes", got)
    (text,) = attached
    assert (text.origin, text.server, text.ref, text.media_type) == (
        "prompt",
        "demo",
        "summarize_notes",
        "text/markdown",
    )
    assert engine.files.read(text.sha256) == got.text.encode("utf-8")
    cid = engine.create_conversation()
    upstream.plan(*(Behavior(text="ok", chunk_delay=0.0) for _ in range(4)))
    user_id, answer_id = await engine.send(cid, "", attachments=attached)
    await answered(engine, cid)
    assert engine.conversation(cid).messages[user_id].attachments == attached  # the ledger names it by sha256
    await engine.retry(cid, answer_id)
    await answered(engine, cid)
    new_cid, _ = engine.branch(cid, answer_id)
    await engine.send(new_cid, "and shorter?")
    await answered(engine, new_cid)
    first = user_parts(upstream.records[0])
    assert first == [{"type": "text", "text": got.text}]  # the prompt's words as the user's, no file heading
    assert first[0]["text"].startswith("Summarize the notes on retries as a table:\n\n# Retries")
    assert user_parts(upstream.records[1]) == first  # Retry
    branch_users = [m for m in upstream.records[2].raw["messages"] if m["role"] == "user"]
    assert branch_users[0]["content"] == first  # the Branch carries the same text
    assert branch_users[-1]["content"] == "and shorter?"


async def test_a_prompt_with_an_embedded_resource_or_an_image_stores_each_as_a_file(
    engine: Engine, upstream: ScriptedUpstream, both: ToolHub
) -> None:
    review = await prompts.get(both, "second", "review", {"language": "python"})
    assert review.text == "Review this python code for correctness."
    (code,) = review.pieces
    assert (code.uri, code.data) == ("file:///second/add.py", b"def add(a, b):\n    return a - b\n")
    greet = await prompts.get(both, "second", "greet", {})
    attached = await from_prompt(engine.files, "second", "greet", greet)
    assert [a.media_type for a in attached] == ["text/markdown", "image/png"]
    assert all((a.origin, a.server, a.ref) == ("prompt", "second", "greet") for a in attached)
    stored = engine.files.read(attached[1].sha256) or b""
    assert b"someone at home" not in stored and b"tEXt" not in stored  # re-encoded without its comment


async def test_at_attaches_a_text_and_an_image_resource_and_both_reach_the_model(
    engine: Engine, upstream: ScriptedUpstream, both: ToolHub
) -> None:
    listed = {(r.server, r.uri or r.template) for r in await resources.resources(both)}
    assert listed >= {
        ("demo", "notes://demo/notes.md"),
        ("demo", "chart://demo/week.png"),
        ("demo", "data://demo/sample.bin"),
        ("demo", "notes://demo/section/{topic}"),
        ("second", "config://second/settings.json"),
        ("second", "image://second/logo.png"),
    }
    notes = await from_resource(
        engine.files,
        "demo",
        "notes://demo/section/caching",
        await resources.read(both, "demo", "notes://demo/section/caching"),
    )
    logo = await from_resource(
        engine.files,
        "second",
        "image://second/logo.png",
        await resources.read(both, "second", "image://second/logo.png"),
    )
    assert notes[0].media_type == "text/markdown" and logo[0].media_type == "image/png"
    assert (logo[0].origin, logo[0].ref, logo[0].width, logo[0].height) == (
        "resource",
        "image://second/logo.png",
        24,
        16,
    )
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="ok", chunk_delay=0.0), Behavior(text="ok", chunk_delay=0.0))
    _, answer_id = await engine.send(cid, "what do these say?", attachments=(*notes, *logo))
    await answered(engine, cid)
    await engine.retry(cid, answer_id)
    await answered(engine, cid)
    parts = user_parts(upstream.records[0])
    assert parts[0] == {"type": "text", "text": "what do these say?"}
    assert parts[1]["text"].startswith("--- notes://demo/section/caching (text/markdown) ---\n# Caching")
    (sent,) = image_bytes(upstream.records[0])
    assert hashlib.sha256(sent).hexdigest() == logo[0].sha256 and b"someone at home" not in sent
    assert user_parts(upstream.records[1]) == parts  # Retry: the same bytes


async def test_a_binary_resource_becomes_a_file_never_pasted_as_bytes(
    engine: Engine, upstream: ScriptedUpstream, both: ToolHub
) -> None:
    (sample,) = await from_resource(
        engine.files, "demo", "data://demo/sample.bin", await resources.read(both, "demo", "data://demo/sample.bin")
    )
    assert (sample.name, sample.media_type, sample.size) == ("sample.bin", "application/octet-stream", 1024)
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="ok", chunk_delay=0.0))
    await engine.send(cid, "here", attachments=(sample,))
    await answered(engine, cid)
    said = json.dumps(upstream.records[0].raw["messages"])
    assert "[The file sample.bin (application/octet-stream, 0.0 MB) was attached; it cannot be shown here.]" in said
    assert base64.b64encode(bytes(range(256))).decode()[:40] not in said


async def test_a_refresh_is_a_new_attachment_naming_the_one_it_replaces(engine: Engine, both: ToolHub) -> None:
    uri = "counter://second/visits"
    (first,) = await from_resource(engine.files, "second", uri, await resources.read(both, "second", uri))
    (again,) = await from_resource(engine.files, "second", uri, await resources.read(both, "second", uri), first.sha256)
    assert first.sha256 != again.sha256 and again.replaces == first.sha256 and first.replaces is None
    assert engine.files.read(first.sha256) != engine.files.read(again.sha256)  # both kept


async def test_a_tool_image_with_a_damaged_ancillary_chunk_is_shown_and_sent_re_encoded(
    engine: Engine, upstream: ScriptedUpstream, both: ToolHub
) -> None:
    from demo.tools_context import damaged_png

    assert damaged(damaged_png()) == ["iCCP"]  # the server's bytes: Pillow alone refuses them
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="Let me look.", tool_calls=[PlannedCall("tiny_image", "{}", "call_t")]))
    upstream.plan(Behavior(text="A red square."))
    await engine.send(cid, "show me the tiny image")
    await answered(engine, cid)
    result = results(engine, cid)["call_t"]
    (image,) = [p for p in result.parts if p.kind == "image"]
    assert (image.media_type, image.width, image.height) == ("image/png", 20, 20)
    stored = both.blobs.get(image.sha256) or b""
    assert b"iCCP" not in stored and b"tEXt" not in stored and b"51.5N" not in stored
    assert Image.open(io.BytesIO(stored)).getpixel((3, 3)) == (220, 40, 40)
    after = [r for r in upstream.records if any(m["role"] == "tool" for m in r.raw["messages"])]
    (sent,) = image_bytes(after[-1])  # the vision model got the re-encoded image after the tool message
    assert sent == stored
