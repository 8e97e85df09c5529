"""Exports a person keeps: one chat as Markdown (what was shown), every chat as a zip of ledgers and Markdown."""

from __future__ import annotations

import io
import json
import zipfile

from ledger.codec import from_dict
from tests.support.engine import EngineFactory, current_attempt
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until
from ui.download_names import chat_file_name
from ui.export import archive, conversation_markdown


async def test_markdown_has_the_shown_path_with_models_endings_and_the_archive_every_ledger(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    first = engine.create_conversation()
    upstream.plan(Behavior(text="A complete answer.", chunk_delay=0.0))
    await engine.submit(first, "question one")
    await wait_until(lambda: not engine.is_streaming(first))
    upstream.plan(Behavior(text=" ".join(f"w{n}" for n in range(300)), chunk_delay=0.02))
    _, m2 = await engine.submit(first, "question two")
    await wait_until(lambda: current_attempt(engine, first, m2).chunks_rendered >= 3)
    await engine.cancel(first, "user")
    stopped = current_attempt(engine, first, m2).text
    second = engine.create_conversation()
    upstream.plan(Behavior(text="Other chat.", chunk_delay=0.0))
    await engine.submit(second, "hello")
    await wait_until(lambda: not engine.is_streaming(second))

    conv = engine.conversation(first)
    assert conv is not None
    markdown = conversation_markdown(conv)
    assert markdown.startswith("# question one\n")
    assert "## You\n\nquestion one" in markdown and "A complete answer." in markdown
    assert "## Assistant (openai/test-model) — Stopped" in markdown and stopped.strip() in markdown

    with zipfile.ZipFile(io.BytesIO(archive(engine))) as zipped:
        names = set(zipped.namelist())
        one, other = f"question one ({first})", chat_file_name(engine.conversation(second))  # its title, its id
        chats = {f"{one}.jsonl", f"{one}.md", f"{other}.jsonl", f"{other}.md"}
        assert names == chats | {"presets.json", "costs.json"}  # every preset version, what each attempt cost
        lines = zipped.read(f"{one}.jsonl").decode("utf-8").splitlines()
        assert [from_dict(json.loads(line)) for line in lines] == list(engine.events(first))
