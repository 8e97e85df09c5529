"""A Send the store cannot record is never lost: the page on a real PostgreSQL database that refuses every write
(read-only sessions), with NiceGUI's simulated user and the real test upstream."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urlsplit

import psycopg
import pytest
from nicegui.testing import User

from tests.support.page import elements, engine, last_answer
from tests.support.postgres import PostgresCluster
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until
from ui.chat_page import PAINTED
from ui.context import current

pytest_plugins = ["nicegui.testing.user_plugin"]


class Gate:
    """Makes one database of the session's cluster refuse every write (read-only sessions, the old ones ended, as
    a failing disk or a fenced primary does), and accept them again."""

    def __init__(self, cluster: PostgresCluster, url: str) -> None:
        self.cluster, self.name = cluster, urlsplit(url).path.lstrip("/")

    def _run(self, refuse: bool) -> None:
        setting = "SET default_transaction_read_only = on" if refuse else "RESET default_transaction_read_only"
        with psycopg.connect(self.cluster.url(), autocommit=True) as conn:
            conn.execute(f'ALTER DATABASE "{self.name}" {setting}')
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (self.name,))

    def close(self) -> None:
        self._run(True)

    def open(self) -> None:
        self._run(False)


@pytest.fixture
def gate(
    monkeypatch: pytest.MonkeyPatch, pg_cluster: PostgresCluster, database_url: str, upstream: ScriptedUpstream
) -> Iterator[Gate]:
    monkeypatch.setenv("LEDGERCHAT_MODEL", "openai/test-model")
    monkeypatch.setenv("LEDGERCHAT_API_BASE", upstream.base_url)
    monkeypatch.setenv("LEDGERCHAT_DATABASE_URL", database_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-unsaved-0123456789")
    monkeypatch.setenv("LEDGERCHAT_ALLOWED_HOSTS", "test")
    gate = Gate(pg_cluster, database_url)
    yield gate
    gate.open()


def box(user: User) -> str:
    return str(user.find("Message").elements.pop().value or "")


async def test_a_send_the_database_cannot_record_stays_in_the_box_and_reaches_no_model(
    gate: Gate, user: User, upstream: ScriptedUpstream
) -> None:
    user.javascript_rules[re.compile(re.escape(PAINTED))] = lambda _: PAINTED
    await wait_until(lambda: current().engine is not None, 15, "the engine started (it joins the cluster first)")
    await user.open("/")
    gate.close()
    user.find("Message").type("keep this message")
    user.find("Message").trigger("keydown.enter.exact.prevent")
    await user.should_see("it could not be saved", retries=150)  # 15 s: a liveness limit on a loaded machine
    assert box(user) == "keep this message", "the text stays in the box"
    assert user.find("Message").elements.pop().enabled and user.find(marker="send").elements.pop().enabled
    assert not upstream.records, "nothing goes to the model before the submit is recorded"
    assert not elements(user, marker="user-message")
    gate.open()
    upstream.plan(Behavior(text="answered after all"))
    await wait_until(lambda: _sent(user), 15, "a Send accepted once the database is back")
    await wait_until(lambda: last_answer(user).status == "complete", 10, "the answer")
    assert last_answer(user).text == "answered after all" and box(user) == ""
    assert len(upstream.records) == 1
    (summary,) = engine().summaries()
    conv = engine().conversation(summary.conversation_id)
    assert conv is not None and [m.text for m in conv.messages.values() if m.role == "user"] == ["keep this message"]


def _sent(user: User) -> bool:
    """Press Enter again (a person retrying) until the message was recorded."""
    if elements(user, marker="user-message"):
        return True
    if box(user) and user.find("Message").elements.pop().enabled:
        user.find("Message").trigger("keydown.enter.exact.prevent")
    return bool(elements(user, marker="user-message"))
