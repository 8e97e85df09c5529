"""A remote tool server's sign-in coming back to another instance than the one waiting (issue 38), at the level of
``app.sign_in_relay``: two instances' relays over real ``NOTIFY ledger_requests`` on one PostgreSQL database, each
with its own ``SignIns``. The holder takes a callback handed on by the other as if the browser had come to it,
refuses another person's callback the way it does locally (the sign-in keeps waiting), and a state nobody holds is
said to be not waiting once the bounded wait ends; the code is in no log line and no table."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Coroutine
from typing import Any

import psycopg
import pytest

from app.sign_in_relay import SignInRelay
from engine.tools import SignIns
from engine.tools.sign_ins import NOT_WAITING, SOMEONE_ELSE
from store.health import ProblemLog
from store.postgres import EVERYONE, AttemptOwners, migrate
from tests.support.waiting import wait_until

CODE = "c0de-that-must-travel-only-in-the-notify"
WITHIN = 2.0


class Instance:
    def __init__(self, url: str, name: str, loop: asyncio.AbstractEventLoop) -> None:
        self.tasks: set[asyncio.Task[None]] = set()
        self.heard: set[str] = set()  # the instances whose ``ping`` reached this one (its LISTEN is on)
        self.owners = AttemptOwners(
            url, name, lease=5.0, problems=ProblemLog(logging.getLogger()),
            on_request=lambda request: loop.call_soon_threadsafe(self.served, request),
        )  # fmt: skip
        self.relay = SignInRelay(self.owners, self.spawn, within=WITHIN)
        self.signins = SignIns()
        self.relay.attach(self.signins)

    def served(self, request: dict[str, Any]) -> None:
        if request.get("kind") == "ping":
            self.heard.add(str(request.get("from")))
        else:
            self.relay.serve(request)

    def spawn(self, coro: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)


@pytest.fixture
async def pair(database_url: str) -> AsyncIterator[tuple[Instance, Instance]]:
    await asyncio.to_thread(migrate, database_url)
    loop = asyncio.get_running_loop()
    a, b = Instance(database_url, "host:1:a", loop), Instance(database_url, "host:2:b", loop)
    for instance in (a, b):
        await asyncio.to_thread(instance.owners.start)
    for sender, listener in ((a, b), (b, a)):  # each instance's listening thread is up before the test begins

        def heard(sender: Instance = sender, listener: Instance = listener) -> bool:
            sender.owners.request(EVERYONE, {"kind": "ping"})
            return sender.owners.instance in listener.heard

        await wait_until(heard, what="the other instance listening")
    yield a, b
    for instance in (a, b):
        await asyncio.to_thread(instance.owners.close)


async def test_a_callback_at_b_is_taken_by_a_for_its_own_person_only(
    pair: tuple[Instance, Instance], database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    a, b = pair
    caplog.set_level(logging.DEBUG)
    waiting = a.signins.expect("st-1", "ada", "notes")
    callback = {"state": "st-1", "code": CODE, "iss": "http://127.0.0.1:9"}

    assert await b.signins.arrive_anywhere(callback, "bo") == (False, SOMEONE_ELSE)
    assert a.signins.holds("st-1") and not waiting.done(), "another person's callback left the sign-in waiting"

    taken, words = await b.signins.arrive_anywhere(callback, "ada")
    assert (taken, words) == (True, "Signed in to notes. You can close this tab: the chat goes on.")
    code = await waiting
    assert (code.code, code.state, code.iss) == (CODE, "st-1", "http://127.0.0.1:9")
    assert not a.signins.holds("st-1")
    assert await b.signins.arrive_anywhere(callback, "ada") == (False, NOT_WAITING), "a callback is taken once"

    assert not any(CODE in record.getMessage() for record in caplog.records)
    with psycopg.connect(database_url) as conn:
        tables = [str(t) for (t,) in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
        for table in tables:
            rows = conn.execute(f'SELECT t::text FROM "{table}" t').fetchall()  # noqa: S608 - the catalog's names
            assert not any(CODE in str(row[0]) for row in rows), table


async def test_a_refused_sign_in_coming_back_to_b_reaches_a_with_the_server_s_words(
    pair: tuple[Instance, Instance],
) -> None:
    a, b = pair
    waiting = a.signins.expect("st-2", None, "notes")
    taken, words = await b.signins.arrive_anywhere({"state": "st-2", "error": "access_denied"}, None)
    assert taken and words.startswith("notes refused the sign-in: access_denied")
    with pytest.raises(Exception, match="access_denied"):
        await waiting


async def test_a_callback_nobody_waits_for_is_said_to_be_not_waiting_once_the_bounded_wait_ends(
    pair: tuple[Instance, Instance],
) -> None:
    a, b = pair
    a.signins.expect("st-3", None, "notes")
    unknown = b.signins.arrive_anywhere({"state": "unknown", "code": CODE}, None)
    assert await unknown == (False, NOT_WAITING)  # (it returns: the wait is WITHIN s at most)
    assert a.signins.holds("st-3"), "a callback for another state leaves the sign-in waiting"


async def test_an_instance_alone_answers_at_once_as_before() -> None:
    signins = SignIns()
    signins.expect("st-4", None, "notes")
    assert await signins.arrive_anywhere({"state": "other", "code": CODE}, None) == (False, NOT_WAITING)
    assert await signins.arrive_anywhere({"state": "st-4", "code": CODE}, None) == (
        True,
        "Signed in to notes. You can close this tab: the chat goes on.",
    )
