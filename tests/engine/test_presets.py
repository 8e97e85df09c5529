"""Agent presets through litellm against the scripted upstream (which records every request): the instructions are
the first message of every request of a chat with that preset and of none other, the attempt names the preset
version it ran with in the ledger and the export, Retry with another preset sends the other instructions, and a
preset is checked before it is saved."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from engine.commands.engine import Engine
from engine.people import Viewer, acting_as
from engine.provider.request_view import requests_seen
from ledger.codec import to_jsonl
from ledger.decide import InputRejected
from ledger.events.core import Started
from ledger.presets import Preset
from tests.support.engine import EngineFactory, current_attempt, finished
from tests.support.tools import demo_hub
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream
from ui.download_names import chat_file_name
from ui.export import archive

FRENCH = "You are Ada, a terse assistant. Answer in French."
PIRATE = "You are Bonny. Answer like a pirate."


def told(engine: Engine) -> Callable[[str, int], str | None]:
    def instructions(preset_id: str, version: int) -> str | None:
        preset = engine.presets.get(preset_id, version)
        return preset.instructions if preset is not None else None

    return instructions


def saved(engine: Engine, name: str, instructions: str, **values: object) -> Preset:
    return engine.presets.save(Preset(preset_id="", name=name, instructions=instructions, **values))


async def test_the_instructions_are_the_first_message_of_every_request_of_a_chat_with_that_preset_and_of_no_other(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    hub, _ = await demo_hub(tmp_path)
    engine = engines(tools=hub)
    ada = saved(engine, "Ada", FRENCH, temperature=0.3, top_p=0.9, max_tokens=300)
    with_preset, without = engine.create_conversation(), engine.create_conversation()
    upstream.plan(Behavior(text="", tool_calls=[PlannedCall("current_time", "{}", "call_t")]), Behavior(text="Voilà."))
    await engine.submit(with_preset, "what time is it?", preset=ada.preset_id)
    await finished(engine, with_preset)
    upstream.plan(Behavior(text="Encore."))
    await engine.submit(with_preset, "and again", preset=ada.preset_id)
    await finished(engine, with_preset)
    ada_requests = list(upstream.records)
    assert len(ada_requests) == 3  # two steps of an agent turn (a tool ran between them), then the next turn
    for record in ada_requests:
        assert record.messages[0] == {"role": "system", "content": FRENCH}
        assert [m["role"] for m in record.messages].count("system") == 1
        assert (record.raw["temperature"], record.raw["top_p"], record.raw["max_tokens"]) == (0.3, 0.9, 300)
    assert ada_requests[1].messages[-1]["role"] == "tool"  # the step after the tool kept the instructions first
    # the audit's "what the model saw", rebuilt from the ledger, is exactly what the upstream received
    conv = engine.conversation(with_preset)
    assert conv is not None
    seen = [
        request
        for message_id in conv.message_ids
        for attempt_id in conv.messages[message_id].attempt_ids
        for request in requests_seen(engine.events(with_preset), attempt_id, told(engine), 20_000)
    ]
    assert [r.preset for r in seen] == [(ada.preset_id, 1)] * 3 and [r.step for r in seen] == [1, 2, 1]
    for request, record in zip(seen, ada_requests, strict=True):
        assert [(m.role, m.text) for m in request.messages] == [
            (m["role"], m.get("content") or "") for m in record.messages
        ]
    assert seen[1].messages[2].tool_calls == ("current_time({})",)
    assert seen[1].messages[3].tool_call_id == "call_t"
    upstream.reset()
    upstream.plan(Behavior(text="Plain."), Behavior(text="Default."))
    await engine.submit(without, "hello")  # no preset at all
    await finished(engine, without)
    await engine.submit(without, "hello again", preset="default")  # the default preset: no instructions
    await finished(engine, without)
    for record in upstream.records:
        assert all(m["role"] != "system" for m in record.messages), record.messages
        assert "temperature" not in record.raw
    await hub.stop()


async def test_an_attempt_names_its_preset_version_in_the_ledger_and_the_export(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    ada = saved(engine, "Ada", FRENCH)
    edited = engine.presets.save(Preset(preset_id=ada.preset_id, name="Ada", instructions=FRENCH + " Be kind."))
    assert (ada.version, edited.version) == (1, 2)
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="Bonjour."))
    _, answer = await engine.submit(cid, "hi", preset=ada.preset_id)
    await finished(engine, cid)
    (started,) = [e for e in engine.events(cid) if isinstance(e, Started)]
    assert (started.preset_id, started.preset_version) == (ada.preset_id, 2)
    assert current_attempt(engine, cid, answer).preset == (ada.preset_id, 2)
    exported = [json.loads(line) for line in to_jsonl(engine.events(cid))]
    (line,) = [e for e in exported if e["kind"] == "started"]
    assert (line["preset_id"], line["preset_version"]) == (ada.preset_id, 2)
    assert upstream.last.messages[0]["content"] == FRENCH + " Be kind."
    zipped = zipfile.ZipFile(io.BytesIO(archive(engine)))  # "Download all chats": the ledger and the presets
    conv = engine.conversation(cid)
    assert conv is not None
    (line,) = [
        json.loads(x) for x in zipped.read(f"{chat_file_name(conv)}.jsonl").decode().splitlines() if '"started"' in x
    ]
    kept = {(p["preset_id"], p["version"]): p for p in json.loads(zipped.read("presets.json"))["presets"]}
    assert kept[(line["preset_id"], line["preset_version"])]["instructions"] == FRENCH + " Be kind."
    assert kept[(ada.preset_id, 1)]["instructions"] == FRENCH
    # the version the attempt names stays readable after later edits and a deletion
    engine.presets.delete(ada.preset_id)
    assert engine.presets.get(ada.preset_id, 2) == edited
    assert ada.preset_id not in {p.preset_id for p in engine.presets.all()}
    with pytest.raises(InputRejected, match="no longer exists"):
        await engine.submit(cid, "again", preset=ada.preset_id)


async def test_retry_with_another_preset_sends_the_other_instructions_and_keeps_both_attempts(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    ada, bonny = saved(engine, "Ada", FRENCH), saved(engine, "Bonny", PIRATE)
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="Bonjour."), Behavior(text="Ahoy."))
    _, answer = await engine.submit(cid, "greet me", preset=ada.preset_id)
    await finished(engine, cid)
    await engine.retry(cid, answer, preset=bonny.preset_id)
    await finished(engine, cid)
    first, second = upstream.records
    assert first.messages[0]["content"] == FRENCH and second.messages[0]["content"] == PIRATE
    assert second.messages[1:] == first.messages[1:]  # the same history, only the instructions differ
    conv = engine.conversation(cid)
    assert conv is not None
    presets = [conv.attempts[a].preset for a in conv.messages[answer].attempt_ids]
    assert presets == [(ada.preset_id, 1), (bonny.preset_id, 1)]
    assert [conv.attempts[a].text for a in conv.messages[answer].attempt_ids] == ["Bonjour.", "Ahoy."]


async def test_a_preset_is_checked_before_it_is_saved_and_every_problem_is_named(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    hub, _ = await demo_hub(tmp_path)
    engine = engines(tools=hub)
    bad = Preset(
        preset_id="", name="  ", model="openai/not-offered", temperature=3.5, top_p=0.0, max_tokens=0,
        tools=("no_such_tool",), approvals=(("*", "sometimes"),),
    )  # fmt: skip
    with pytest.raises(InputRejected) as refused:
        engine.presets.save(bad)
    words = str(refused.value)
    for expected in (
        "Name: a preset needs a name.",
        "Temperature: 3.5 is out of range",
        "Top P: 0 is out of range",
        "Max output tokens: 0 is out of range",
        "Model: 'openai/not-offered' is not one this app offers",
        "Tool 'no_such_tool' is not offered by any tool server.",
        "'sometimes' is not one of run, ask, once, never",
    ):
        assert expected in words, words
    assert [p.preset_id for p in engine.presets.all()] == ["default"]  # nothing was stored
    fine = saved(engine, "Clock only", "", tools=("current_time",), approvals=(("*", "ask"), ("current_time", "run")))
    assert fine.approval_overrides == {"*": "ask", "current_time": "run"}
    copy = engine.presets.duplicate(fine.preset_id)
    assert (copy.name, copy.tools, copy.version) == ("Clock only (copy)", ("current_time",), 1)
    with pytest.raises(InputRejected, match="cannot be deleted"):
        engine.presets.delete("default")
    await hub.stop()


async def test_a_preset_offers_only_its_tools_and_a_call_to_another_one_never_runs(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    hub, _ = await demo_hub(tmp_path)
    engine = engines(tools=hub)
    clock = saved(engine, "Clock", "", tools=("current_time",))
    cid = engine.create_conversation()
    call = PlannedCall("calculator", '{"expression": "1+1"}', "call_c")
    upstream.plan(Behavior(text="", tool_calls=[call]), Behavior(text="ok"))
    await engine.submit(cid, "add", preset=clock.preset_id)
    await finished(engine, cid)
    first, second = upstream.records
    assert [t["function"]["name"] for t in first.raw["tools"]] == ["current_time"]
    (tool_message,) = [m for m in second.messages if m["role"] == "tool"]
    assert "No tool named 'calculator' is available" in str(tool_message["content"])
    await hub.stop()


async def test_the_demo_model_follows_a_presets_persona_and_language_and_ignores_them_without_one(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    ada = saved(engine, "Ada", FRENCH)
    plain_ada = saved(engine, "Ada in English", "You are Ada.")
    answers = []
    for preset in (ada.preset_id, plain_ada.preset_id, None):
        cid = engine.create_conversation()
        _, answer = await engine.submit(cid, "tell me about caching", preset=preset)  # nothing planned: the demo
        await finished(engine, cid)
        answers.append(current_attempt(engine, cid, answer).text)
    assert answers[0].startswith("Bonjour, je suis Ada.") and "Dites-moi" in answers[0]
    assert answers[1].startswith("Hello, I am Ada.") and "Bonjour" not in answers[1]
    assert "Ada" not in answers[2] and "Bonjour" not in answers[2]


async def test_in_team_mode_a_persons_presets_are_their_own_and_a_shared_one_only_an_admin_changes(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    ann, ben, root = (Viewer(team=True, person=f"local:{n}", admin=n == "root") for n in ("ann", "ben", "root"))
    mine = engine.presets.save(Preset(preset_id="", name="Ann's pirate", instructions=PIRATE), ann)
    team = engine.presets.save(Preset(preset_id="", name="House style", instructions=FRENCH), root, shared=True)
    assert (mine.owner, team.owner) == ("local:ann", None)
    assert [p.name for p in engine.presets.all(ben)] == ["Default", "House style"], "never another's own"
    assert [p.name for p in engine.presets.all(ann)] == ["Default", "Ann's pirate", "House style"]
    assert engine.presets.get(mine.preset_id, viewer=ben) is None and engine.presets.versions(mine.preset_id, ben) == []
    for refused in (
        lambda: engine.presets.save(replace(mine, name="Ben's now"), ben),  # another's: as a missing one
        lambda: engine.presets.delete(mine.preset_id, ben),
        lambda: engine.presets.duplicate(mine.preset_id, viewer=ben),
        lambda: engine.presets.save(replace(team, name="Mine now"), ann),  # shared: only an admin changes it
        lambda: engine.presets.save(replace(engine.presets.default(), instructions="x"), ben),
        lambda: engine.presets.delete(team.preset_id, ann),
        lambda: engine.presets.save(Preset(preset_id="", name="Everyone's"), ben, shared=True),
    ):
        with pytest.raises(InputRejected):
            refused()
    copy = engine.presets.duplicate(team.preset_id, viewer=ben)  # anyone may make a shared one their own
    assert copy.owner == "local:ben" and copy.instructions == FRENCH
    assert engine.presets.save(replace(team, instructions=PIRATE), root).version == 2
    cid = engine.create_conversation()
    with acting_as("local:ben"), pytest.raises(InputRejected, match="no longer exists"):
        await engine.submit(cid, "hello", preset=mine.preset_id)  # a forged choice of another's preset
    assert not [e for e in engine.events(cid) if isinstance(e, Started)], "nothing was sent"
