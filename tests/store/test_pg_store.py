"""What only the PostgreSQL store does: several instances on one database, each seeing the others' events, never
colliding on a seq, even when one stalls past its lease; migrations once; a password that never shows."""

from __future__ import annotations

import threading
from pathlib import Path

import psycopg
import pytest

from ledger.errors import ConversationBusyError, DatabaseUnavailableError
from ledger.events.core import Chunk, Renamed
from store.postgres.store import PgStore
from tests.support.ledger_builders import conversation_events
from tests.support.postgres import PASSWORD
from tests.support.waiting import wait_until_blocking


@pytest.fixture
def instances(database_url: str):
    opened: list[PgStore] = []

    def open_(**options) -> PgStore:
        options.setdefault("flush_interval", 0.05)
        opened.append(PgStore.open(database_url, **options))
        return opened[-1]

    yield open_
    for store in opened:
        store.close()


def test_events_one_instance_commits_reach_another_in_order_while_it_runs(instances) -> None:
    a, b = instances(), instances()
    seen: list = []
    b.follow(seen.extend)
    written = [a.append(e) for e in conversation_events("c1", answers=2, chunks=30)]
    wait_until_blocking(lambda: len(seen) == len(written), timeout=5, what="b following a's events")
    assert seen == written and list(b.events("c1")) == written and b.conversation_ids() == ["c1"]


def test_a_conversation_another_instance_is_writing_is_refused_as_busy_then_written_once_quiet(instances) -> None:
    a, b = instances(release_after=0.1), instances()
    written = [a.append(e) for e in conversation_events("c1", answers=1, chunks=3)]
    with pytest.raises(ConversationBusyError, match=a.instance.split(":")[1]):
        b.append(Renamed(conversation_id="c1", ts="t", title="too soon"))
    late = wait_until_blocking(
        lambda: _try(lambda: b.append(Renamed(conversation_id="c1", ts="t", title="later"))), what="a quiet lease"
    )
    assert late.seq == len(written) + 1 and list(b.events("c1")) == [*written, late]


def test_an_instance_that_stalled_past_its_lease_writes_nothing_and_says_so(instances, database_url: str) -> None:
    slow, other = instances(flush_interval=30.0), instances()
    first = [slow.append(e) for e in conversation_events("c1", answers=1, chunks=0)[:2]]  # created, submitted
    assert slow.flush_sync()
    stuck = slow.append(Chunk(conversation_id="c1", ts="t", attempt_id="a1", request_id="r1", chunk_seq=0, text="x"))
    with psycopg.connect(database_url, autocommit=True) as conn:  # its lease runs out while it is stalled
        conn.execute("UPDATE conversations SET writer_until = now() - interval '1 second' WHERE id = 'c1'")
    taken = other.append(Renamed(conversation_id="c1", ts="t", title="taken over"))
    assert taken.seq == stuck.seq == 3 and other.flush_sync()
    slow.flush_sync()
    assert any("were not saved" in p and "took the conversation over" in p for p in slow.problems)
    assert list(instances(read_only=True).events("c1")) == [*first, taken], "one event per seq, the newer owner's"
    wait_until_blocking(lambda: list(slow.events("c1")) == [*first, taken], timeout=10, what="following the new owner")


def test_instances_starting_together_apply_each_migration_once(database_url: str) -> None:
    stores: list[PgStore] = []
    threads = [threading.Thread(target=lambda: stores.append(PgStore.open(database_url))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        with psycopg.connect(database_url) as conn:
            versions = [row[0] for row in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
        migrations = sorted(Path("store/postgres/migrations").glob("*.sql"))
        assert len(stores) == 4 and versions == list(range(1, len(migrations) + 1))
    finally:
        for store in stores:
            store.close()


def test_a_database_that_refuses_the_login_is_named_without_its_password(database_url: str) -> None:
    wrong = database_url.replace(PASSWORD, PASSWORD + "-wrong")
    with pytest.raises(DatabaseUnavailableError) as error:
        PgStore.open(wrong)
    assert "password authentication failed" in str(error.value) and PASSWORD not in str(error.value)
    assert "[redacted]" in str(error.value)


def _try(action):
    try:
        return action()
    except ConversationBusyError:
        return None


def test_a_conversation_taken_for_writing_without_an_append_is_given_back_once_quiet(instances) -> None:
    a, b = instances(release_after=0.1, lease_seconds=60.0), instances(release_after=0.1)
    written = [b.append(e) for e in conversation_events("c1", answers=1, chunks=2)]
    assert b.flush_sync()
    wait_until_blocking(lambda: _try(lambda: a.hold("c1") or True), what="a taking c1 once b gave it back")
    assert list(a.events("c1")) == written, "taking it caught up first"
    late = wait_until_blocking(
        lambda: _try(lambda: b.append(Renamed(conversation_id="c1", ts="t", title="b again"))),
        timeout=3,
        what="a giving c1 back after 0.1 s quiet, long before its 60 s lease ends",
    )
    assert late.seq == len(written) + 1
