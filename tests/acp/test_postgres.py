"""``main.py acp`` on PostgreSQL beside another instance (an engine of this process with its own store and
``app.cluster``, as the web app has): the other instance follows the editor's session live, and its Stop (as the
browser's Stop button sends it) ends the editor's prompt with ``cancelled``, the chunks the editor received being
the interrupted message."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app.cluster import Cluster
from engine.commands.assembly import build_engine
from ledger.events.core import Cancelled, Persisted
from store.postgres.store import PgStore
from tests.acp.conftest import start_agent
from tests.support.engine import make_settings
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until

pytestmark = pytest.mark.asyncio
LONG = " ".join(f"w{i}" for i in range(400))


async def test_a_stop_from_another_instance_ends_the_editors_prompt_cancelled_with_the_prefix_it_received(
    database_url: str, scripted: ScriptedUpstream, tmp_path: Path
) -> None:
    store = PgStore.open(database_url, flush_interval=0.05)
    cluster = Cluster(store, database_url)
    other = build_engine(store, make_settings(scripted.base_url), peers=cluster)
    await cluster.start(other)
    try:
        async with start_agent(tmp_path / "data", scripted, "--database-url", database_url) as editor:
            sid = await editor.new_session()
            scripted.plan(Behavior(text=LONG, chunk_delay=0.05))
            prompt = asyncio.ensure_future(editor.prompt(sid, "a long answer, please"))
            await editor.chunks_arrived(sid, 5)
            await wait_until(lambda: other.is_streaming(sid), 20, "the other instance following the session live")
            assert await other.cancel(sid, "user"), "the Stop reached the editor's instance"
            assert (await prompt).stop_reason == "cancelled"
            events = await wait_until(
                lambda: (found := list(store.events(sid))) and isinstance(found[-1], Persisted) and found, 20, "saved"
            )
        [answer] = [e for e in events if isinstance(e, Persisted)]
        assert answer.status == "interrupted" and editor.text(sid) == answer.text and 0 < len(answer.text) < len(LONG)
        assert [e.source for e in events if isinstance(e, Cancelled)] == ["user"]
    finally:
        await other.shutdown()
        await cluster.close()
        store.close()
