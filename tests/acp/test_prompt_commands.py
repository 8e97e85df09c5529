"""The tool servers' MCP prompts as an editor's "/" commands, over real stdio: the demo server (the app's tool server)
offers ``summarize_notes`` (two arguments, ``topic`` required) and ``standup`` (none); the editor is offered them as
``/demo.summarize_notes`` and ``/demo.standup`` beside the presets; running one stores the prompt's messages by
sha256 as the user message's attachment (origin, server, name), and the model is sent them as the user's words."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from acp import RequestError

from ledger.events.core import Submitted
from store.blobs import FolderBlobs
from tests.acp.conftest import Editor, ledger_events, persisted
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until

pytestmark = pytest.mark.asyncio(loop_scope="module")


def said(record: Any) -> str:
    """The text of the last user message the model was sent."""
    [*_, user] = [m for m in record.messages if m["role"] == "user"]
    content = user["content"]
    return content if isinstance(content, str) else "\n".join(p.get("text", "") for p in content)


async def test_the_tool_servers_prompts_are_offered_as_commands_beside_the_presets_with_their_arguments_hint(
    agent: Editor, scripted: ScriptedUpstream
) -> None:
    sid = await agent.new_session()
    [update] = await wait_until(lambda: agent.of_kind(sid, "available_commands_update"), 30, "the commands")
    offered = {c.name: c for c in update.available_commands}
    assert {"default", "pirate", "demo.summarize_notes", "demo.standup"} <= set(offered)
    hint = offered["demo.summarize_notes"].input.root.hint
    assert hint.startswith("topic (the whole text), or topic=… style=…")
    assert offered["demo.standup"].input is None, "a prompt without arguments takes no input"
    assert "Summarize one section of the demo notes" in offered["demo.summarize_notes"].description


async def test_a_prompt_command_sends_the_prompts_messages_stored_by_sha256_with_their_source(
    agent: Editor, scripted: ScriptedUpstream
) -> None:
    sid = await agent.new_session()
    scripted.plan(Behavior(text="- retries: three."))
    assert (await agent.prompt(sid, "/demo.summarize_notes retries")).stop_reason == "end_turn"
    assert said(scripted.last).startswith("Summarize the notes on retries as bullets:")
    [sent] = [
        e for e in (await persisted(agent, sid)) and ledger_events(agent.data_dir, sid) if isinstance(e, Submitted)
    ]
    assert sent.text == "", "the text after the command was the prompt's argument"
    [fetched] = sent.attachments
    assert (fetched.origin, fetched.server, fetched.ref, fetched.name) == (
        "prompt",
        "demo",
        "summarize_notes",
        "demo-summarize_notes.md",
    )
    stored = FolderBlobs(agent.data_dir / "blobs", read_only=True).get(fetched.sha256)
    assert stored is not None and hashlib.sha256(stored).hexdigest() == fetched.sha256
    assert said(scripted.last) == stored.decode(), "the model reads the stored bytes as the user's words"


async def test_several_arguments_are_given_as_name_value_pairs_and_a_missing_required_one_is_refused(
    agent: Editor, scripted: ScriptedUpstream
) -> None:
    sid = await agent.new_session()
    scripted.plan(Behavior(text="| timeouts |"))
    reply = await agent.prompt(sid, '/demo.summarize_notes topic=timeouts style="a table"')
    assert reply.stop_reason == "end_turn"
    assert said(scripted.last).startswith("Summarize the notes on timeouts as a table:")
    asked = len(scripted.records)
    with pytest.raises(RequestError) as refused:
        await agent.prompt(sid, "/demo.summarize_notes")
    assert refused.value.code == -32602 and "needs topic" in refused.value.data["details"]
    assert len(scripted.records) == asked, "the model was not asked"
    await persisted(agent, sid)
    assert len([e for e in ledger_events(agent.data_dir, sid) if isinstance(e, Submitted)]) == 1


async def test_a_prompt_without_arguments_keeps_the_words_after_it_and_an_unknown_name_goes_as_text(
    agent: Editor, scripted: ScriptedUpstream
) -> None:
    sid = await agent.new_session()
    scripted.plan(Behavior(text="Yesterday: retries."), Behavior(text="It is a file."))
    assert (await agent.prompt(sid, "/demo.standup keep it short")).stop_reason == "end_turn"
    words = said(scripted.last)
    assert "**user:** Write my stand-up" in words and "**assistant:** Happy to." in words
    assert words.startswith("keep it short\n"), "the user's own words, then the prompt's (as the page sends them)"
    assert (await agent.prompt(sid, "/notes.md is what?")).stop_reason == "end_turn"
    assert said(scripted.last) == "/notes.md is what?"
    await persisted(agent, sid, 2)
    first, second = [e for e in ledger_events(agent.data_dir, sid) if isinstance(e, Submitted)]
    assert first.text == "keep it short" and [a.ref for a in first.attachments] == ["standup"]
    assert second.attachments == ()
