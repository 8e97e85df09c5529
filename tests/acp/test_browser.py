"""An editor's session in the browser: ``main.py acp`` and the web app on one PostgreSQL database; a Chromium tab
of the app shows the session's answer live while the editor is streamed it, and Stop pressed in that tab ends the
editor's prompt with ``cancelled``, the editor and the tab showing the same interrupted text. The editor's client
runs on a loop of its own thread (the browser tests are synchronous). The ledger, read from the database after,
holds the Stop as the tab's (source ``user``) and the interrupted message as the text the editor received."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import psycopg
from playwright.sync_api import expect

from ledger.events.core import Cancelled, Persisted
from store.postgres.store import PgStore
from tests.acp.conftest import Editor, start_agent
from tests.support.app_runner import AppRunner
from tests.support.browser import Pages, last_answer, visible_words, wait_words
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until_blocking

T = TypeVar("T")
LONG = " ".join(f"w{i}" for i in range(600))


class Beside:
    """An event loop on a thread of its own, running the editor's client."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="editor", daemon=True)
        self.thread.start()

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def call(self, coro: Coroutine[Any, Any, T], timeout: float = 60) -> T:
        return self.submit(coro).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


def started_in_database(url: str, cid: str) -> None:
    """Wait until the bridge's first writes of the chat are in the database: it answers ``session/new`` a moment
    before they are, and a tab opened at once on a busy machine found no such chat (fresh run 57)."""

    def started() -> bool:
        with psycopg.connect(url) as conn:
            query = "SELECT 1 FROM events WHERE conversation_id = %s AND kind = 'started'"
            return conn.execute(query, (cid,)).fetchone() is not None

    wait_until_blocking(started, 30, "the editor's answer started, in the database")


@contextmanager
def editor_beside(data_dir: Path, upstream: ScriptedUpstream, *extra: str) -> Iterator[tuple[Beside, Editor]]:
    beside = Beside()
    agent = start_agent(data_dir, upstream, *extra)
    editor = beside.call(agent.__aenter__(), timeout=120)
    try:
        yield beside, editor
    finally:
        beside.call(agent.__aexit__(None, None, None), timeout=60)
        beside.close()


def test_an_editors_session_shows_live_in_a_chromium_tab_and_stop_there_ends_the_editors_prompt_cancelled(
    database_url: str, run_app: AppRunner, open_page: Pages, upstream_server: ScriptedUpstream, tmp_path: Path
) -> None:
    upstream_server.reset()
    database = ("--database-url", database_url)
    with (
        run_app(*database, "--titles", "off") as app,
        editor_beside(tmp_path / "data", upstream_server, *database) as (
            beside,
            editor,
        ),
    ):
        sid = beside.call(editor.new_session())
        upstream_server.plan(Behavior(text=LONG, chunk_delay=0.04))
        prompt = beside.submit(editor.prompt(sid, "a long answer, please"))
        started_in_database(database_url, sid)
        page = open_page(app, f"/chat/{sid}")
        wait_words(page, 10)  # live in the tab while the editor is streamed it
        assert not prompt.done()
        page.get_by_role("button", name="Stop").click()
        assert prompt.result(timeout=60).stop_reason == "cancelled"
        expect(last_answer(page)).to_have_attribute("data-status", "interrupted")
        received = editor.text(sid).split()
        assert 10 <= len(received) < 600 and visible_words(page) == received
    store = PgStore.open(database_url, read_only=True)
    try:
        events = list(store.events(sid))
    finally:
        store.close()
    [answer] = [e for e in events if isinstance(e, Persisted)]
    assert answer.status == "interrupted" and answer.text == editor.text(sid), "the editor got the kept prefix"
    assert [e.source for e in events if isinstance(e, Cancelled)] == ["user"], "the tab's Stop, on the one path"
