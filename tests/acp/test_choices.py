"""What an editor session chooses, over real stdio: the model as the config option ``model`` (the models the app
offers, ``--models``), the agent preset as the config option ``mode`` and as "/" commands (the
``available_commands_update`` that follows ``session/new`` and ``session/load``), each recorded on the attempt's
``started`` as an answer asked for in the page is."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from acp import RequestError

from ledger.events.core import Started
from ledger.presets import Preset
from store.presets import FilePresets
from tests.acp.conftest import PIRATE, Editor, ledger_events, persisted, start_agent
from tests.support.app_process import ROOT
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until

pytestmark = pytest.mark.asyncio(loop_scope="module")
SECOND = "openai/second-model"
POET = "You are a poet. Answer in verse."


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def chooser(tmp_path_factory: pytest.TempPathFactory, upstream_server: ScriptedUpstream) -> AsyncIterator[Editor]:
    """An agent offering two models, with a pirate preset and a poet preset that names the second model."""
    data_dir = tmp_path_factory.mktemp("choices") / "data"
    data_dir.mkdir()
    presets = FilePresets(data_dir / "presets.json")
    presets.add(Preset(preset_id="pirate", name="Pirate", instructions=PIRATE))
    presets.add(Preset(preset_id="poet", name="Poet Laureate", instructions=POET, model=SECOND))
    async with start_agent(data_dir, upstream_server, "--models", SECOND) as editor:
        yield editor


def started(editor: Editor, sid: str) -> list[tuple[str, str | None]]:
    return [(e.model, e.preset_id) for e in ledger_events(editor.data_dir, sid) if isinstance(e, Started)]


def options(response: object) -> dict[str, tuple[str, list[str]]]:
    found = getattr(response, "config_options", None) or []
    return {o.id: (o.current_value, [c.value for c in o.options]) for o in found}


async def test_a_new_session_offers_model_and_preset_options_then_the_presets_as_commands(
    chooser: Editor, scripted: ScriptedUpstream
) -> None:
    made = await chooser.conn.new_session(cwd=str(ROOT), mcp_servers=[])
    assert options(made) == {
        "mode": ("default", ["default", "pirate", "poet"]),
        "model": ("openai/test-model", ["openai/test-model", SECOND]),
    }
    sid = made.session_id
    [update] = await wait_until(lambda: chooser.of_kind(sid, "available_commands_update"), 20, "the commands")
    names = [c.name for c in update.available_commands]
    assert names == ["default", "pirate", "poet-laureate", "demo.summarize_notes", "demo.standup"], "then the prompts"
    wire = [
        m
        for m in chooser.wire
        if m.get("result", {}).get("sessionId") == sid or m.get("params", {}).get("sessionId") == sid
    ]
    assert "result" in wire[0], "the commands follow the session/new answer"


async def test_the_model_chosen_as_a_config_option_answers_the_next_prompts_and_a_load_starts_with_it(
    chooser: Editor, scripted: ScriptedUpstream
) -> None:
    sid = (await chooser.conn.new_session(cwd=str(ROOT), mcp_servers=[])).session_id
    with pytest.raises(RequestError) as refused:
        await chooser.conn.set_config_option(config_id="model", session_id=sid, value="openai/no-such-model")
    assert refused.value.code == -32602
    chosen = await chooser.conn.set_config_option(config_id="model", session_id=sid, value=SECOND)
    assert options(chosen)["model"][0] == SECOND
    scripted.plan(Behavior(text="From the second model."))
    assert (await chooser.prompt(sid, "who answers?")).stop_reason == "end_turn"
    assert scripted.last.model == "second-model"
    await persisted(chooser, sid)
    assert started(chooser, sid) == [(SECOND, "default")]
    loaded = await chooser.conn.load_session(cwd=str(ROOT), session_id=sid, mcp_servers=[])
    assert options(loaded)["model"][0] == SECOND, "a loaded session goes on with its last answer's model"


async def test_a_preset_command_with_text_runs_that_preset_for_this_prompt_only(
    chooser: Editor, scripted: ScriptedUpstream
) -> None:
    sid = (await chooser.conn.new_session(cwd=str(ROOT), mcp_servers=[])).session_id
    scripted.plan(Behavior(text="Arr."), Behavior(text="Plainly."))
    assert (await chooser.prompt(sid, "/pirate what does the ledger keep?")).stop_reason == "end_turn"
    assert scripted.last.messages[0] == {"role": "system", "content": PIRATE}
    assert scripted.last.messages[-1] == {"role": "user", "content": "what does the ledger keep?"}
    assert (await chooser.prompt(sid, "and now?")).stop_reason == "end_turn"
    assert scripted.last.messages[0]["role"] == "user", "the next prompt runs with the session's preset again"
    await persisted(chooser, sid, 2)
    assert started(chooser, sid) == [("openai/test-model", "pirate"), ("openai/test-model", "default")]


async def test_a_preset_command_alone_chooses_the_preset_and_its_model_for_the_next_prompts_without_asking_the_model(
    chooser: Editor, scripted: ScriptedUpstream
) -> None:
    sid = (await chooser.conn.new_session(cwd=str(ROOT), mcp_servers=[])).session_id
    asked = len(scripted.records)
    assert (await chooser.prompt(sid, "/poet-laureate")).stop_reason == "end_turn"
    assert len(scripted.records) == asked, "no request to the model"
    assert [u.current_mode_id for u in chooser.of_kind(sid, "current_mode_update")] == ["poet"]
    [changed] = chooser.of_kind(sid, "config_option_update")
    assert {o.id: o.current_value for o in changed.config_options} == {"mode": "poet", "model": SECOND}
    scripted.plan(Behavior(text="In verse."))
    assert (await chooser.prompt(sid, "sing")).stop_reason == "end_turn"
    assert scripted.last.messages[0] == {"role": "system", "content": POET}
    await persisted(chooser, sid)
    assert started(chooser, sid) == [(SECOND, "poet")]
