"""A conversation's own tool servers over the app's (``engine.tools.ChatHub``), both the real demo server over
stdio: the conversation's turns are offered both sets (a name both have: the conversation's as ``server_tool``),
each call reaches the server that lists the tool, other conversations see the app's alone, and ``detach`` stops the
conversation's server while the app's goes on."""

from __future__ import annotations

from pathlib import Path

from engine.tools import attach, detach, own_name
from tests.support.tools import demo_hub, demo_server_config, server_record


def names(schemas: list[dict]) -> set[str]:
    return {s["function"]["name"] for s in schemas}


async def test_a_conversations_servers_are_offered_beside_the_apps_in_it_alone_and_stop_when_detached(
    tmp_path: Path,
) -> None:
    app, app_record = await demo_hub(tmp_path)
    try:
        own_record = tmp_path / "own-record.jsonl"
        name = own_name("editor demo", set(app.configs))
        chat = attach(app, "conv_a", (demo_server_config(own_record, name=name),))
        assert await chat.settled(30) and chat.health()[0].state == "ready"
        assert app.of_chat("conv_a") is chat and app.of_chat("conv_b") is app
        offered = names(chat.schemas())
        assert {"slow_task", "editor_demo_slow_task"} <= offered, "a name both have: the conversation's prefixed"
        assert "editor_demo_slow_task" not in names(app.schemas()), "another conversation sees the app's alone"
        for tool, record in (("slow_task", app_record), ("editor_demo_slow_task", own_record)):
            resolved = chat.resolve(tool)
            assert resolved is not None
            await chat.call(resolved.server, resolved.tool, {"seconds": 0}, None)
            assert [r["event"] for r in server_record(record)][-1] == "slow_task_finished", f"{tool} ran there"
        await detach(app, "conv_a")
        assert chat.health()[0].state == "stopped" and app.of_chat("conv_a") is app
        assert app.health()[0].state == "ready", "the app's server goes on"
    finally:
        await app.stop()


def test_a_conversations_server_names_keep_apart_from_the_apps_and_each_other() -> None:
    assert own_name("my files!", {"demo"}) == "my_files_"
    assert own_name("demo", {"demo", "demo-2"}) == "demo-3"
    assert own_name("", set()) == "server"
