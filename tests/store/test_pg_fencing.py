"""Fencing epochs on PostgreSQL (issue 27): the database refuses a write with an old epoch in the writing
transaction, a takeover's epoch is accepted only once the owner's lease passed by the database's clock, a
``persisted`` ends the owner row, renewal tells the owner when its row is gone, the janitor cleans rows of ended
attempts, a batch re-sent after a lost COMMIT acknowledgement is not judged lost, and a session frozen inside a
transaction does not hold its locks for long."""

from __future__ import annotations

import logging
import threading
import time

import psycopg
import pytest

from ledger.errors import ConversationBusyError
from ledger.events.core import AnyEvent, Chunk, Created, Done, Persisted, Renamed, Selected, Started
from store.health import ProblemLog
from store.postgres.owners import AttemptOwners, ClaimRefused
from store.postgres.pool import IDLE_IN_TRANSACTION, make_pool
from store.postgres.store import PgStore
from tests.support.waiting import wait_until_blocking

WAITING_ON_A_LOCK = "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
TAKEN_BY_ANOTHER = "UPDATE conversations SET writer = 'b', lease_token = 'b', writer_until = now() - interval '1s'"
NOTHING_MORE_WINDOW = 1.5  # seconds in which nothing more may appear (three renewals of a 1.2 s lease)


@pytest.fixture
def opened(database_url: str):
    stores: list[PgStore] = []
    owners: list[AttemptOwners] = []

    def store(**options) -> PgStore:
        options.setdefault("flush_interval", 30.0)  # a batch is written when a test flushes
        options.setdefault("release_after", 0.1)
        stores.append(PgStore.open(database_url, **options))
        return stores[-1]

    def owner(instance: str, lease: float = 5.0, **options) -> AttemptOwners:
        made = AttemptOwners(
            database_url, instance, lease=lease, on_request=lambda r: None, problems=ProblemLog(logging.getLogger()),
            **options,
        )  # fmt: skip
        made.start()
        owners.append(made)
        return made

    yield store, owner
    for made in owners:
        made.close()
    for opened_store in stores:
        opened_store.close()


def sql(url: str, statement: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        cursor = conn.execute(statement.encode(), params)
        return cursor.fetchall() if cursor.description else []


def started(cid: str, aid: str) -> Started:
    return Started(conversation_id=cid, ts="t", attempt_id=aid, message_id=f"m-{aid}", user_message_id="u", turn=1,
                   model="m")  # fmt: skip


def chunk(cid: str, aid: str, n: int) -> Chunk:
    return Chunk(conversation_id=cid, ts="t", attempt_id=aid, request_id="r", chunk_seq=n, text=f"w{n} ")


def persisted(cid: str, aid: str) -> Persisted:
    return Persisted(conversation_id=cid, ts="t", attempt_id=aid, message_id=f"m-{aid}", status="interrupted", text="")


def _try(action):
    try:
        return action()
    except ConversationBusyError:
        return None


def test_an_old_epoch_is_refused_by_the_database_and_the_rest_of_the_batch_is_written(opened, database_url) -> None:
    store, owner = opened
    refusals: list[tuple[str, list[str]]] = []
    a = store(on_refused=lambda cid, aids: refusals.append((cid, aids)))
    owners = owner(a.instance)
    created = [a.append(Created(conversation_id=c, ts="t", title=c)) for c in ("c1", "c2")]
    assert a.flush_sync()
    epoch = owners.claim("a1", "c1")
    assert epoch > 0 and owners.claim("a1", "c1") == epoch, "claiming again what this instance owns: same epoch"
    a.hold("a1", epoch)
    a.append(started("c1", "a1"))
    a.append(chunk("c1", "a1", 0))
    assert a.flush_sync() and sql(database_url, "SELECT epoch FROM events WHERE attempt_id = 'a1'") == [(epoch,)] * 2
    sql(database_url, "UPDATE attempt_owners SET epoch = nextval('ledger_epochs'), owner = 'b' WHERE attempt_id = 'a1'")
    late = [
        a.append(chunk("c1", "a1", 1)),
        a.append(Done(conversation_id="c1", ts="t", attempt_id="a1", request_id="r")),
    ]
    renamed = a.append(Renamed(conversation_id="c2", ts="t", title="written beside the refusal"))
    assert not a.flush_sync(), "one batch: c1's part refused (flush says so), c2's written"
    assert refusals == [("c1", ["a1"])]
    assert sql(database_url, "SELECT count(*) FROM events WHERE attempt_id = 'a1'") == [(2,)], "nothing of it stored"
    assert sql(database_url, "SELECT seq, kind FROM events WHERE conversation_id = 'c2' ORDER BY seq") == [
        (1, "created"), (renamed.seq, "renamed"),
    ]  # fmt: skip
    assert [e.seq for e in a.events("c1")] == [1, 2, 3] and late[0].seq == 4, "dropped from memory, re-read"
    assert any("refused by the database" in p and "a1" in p for p in a.problems)
    assert a.health().saving_fails is None and a.health().unsaved == 0, "reported, never a saving failure"
    again = a.append(Renamed(conversation_id="c1", ts="t", title="after the refusal"))
    assert again.seq == 4 and a.flush_sync(), "the refused batch is not retried: the conversation writes on"
    assert sql(database_url, "SELECT max(seq) FROM events WHERE conversation_id = 'c1'") == [(4,)]
    assert created[0].seq == 1


def test_a_takeover_waits_for_the_lease_by_the_database_clock_its_epoch_is_accepted_and_persisted_ends_the_row(
    opened, database_url
) -> None:
    store, owner = opened
    refusals: list[tuple[str, list[str]]] = []
    a, b = store(on_refused=lambda cid, aids: refusals.append((cid, aids))), store()
    lost: list[str] = []
    oa, ob = owner(a.instance, lease=1.2, on_lost=lost.append), owner(b.instance, lease=5.0)
    a.append(Created(conversation_id="c1", ts="t", title="c1"))
    before_claim = time.monotonic()
    old = oa.claim("a1", "c1")
    with pytest.raises(ClaimRefused):
        ob.claim("a1", "c1")
    a.hold("a1", old)
    a.append(started("c1", "a1"))
    assert a.flush_sync()
    oa.forget("a1")  # a stops renewing: as if frozen
    assert ob.take_over("a1", old) is None, "its lease has not passed"
    new = wait_until_blocking(lambda: ob.take_over("a1", old), timeout=10, what="a's lease passing")
    assert time.monotonic() - before_claim >= 1.2 and new > old
    assert ob.take_over("a1", old) is None, "the old epoch is gone"
    b.hold("a1", new)
    end = wait_until_blocking(lambda: _try(lambda: b.append(persisted("c1", "a1"))), what="a quiet write lease")
    assert b.flush_sync()
    assert sql(database_url, "SELECT kind, epoch FROM events WHERE seq = %s", (end.seq,)) == [("persisted", new)]
    assert sql(database_url, "SELECT count(*) FROM attempt_owners") == [(0,)], "the end removed the owner row"
    wait_until_blocking(lambda: _try(lambda: a.append(chunk("c1", "a1", 7))), what="b's quiet write lease")
    a.flush_sync()
    assert refusals == [("c1", ["a1"])], "the frozen owner's write after the end is refused"
    assert sql(database_url, "SELECT count(*) FROM events WHERE attempt_id = 'a1' AND kind = 'persisted'") == [(1,)]
    wait_until_blocking(lambda: list(a.events("c1")) == list(b.events("c1")), what="a re-reading the conversation")
    assert lost == [], "a forgot a1 before: nothing to tell"


def test_renewal_tells_the_owner_when_its_row_is_taken_but_not_when_its_end_removed_it(opened, database_url) -> None:
    store, owner = opened
    a = store()
    lost: list[str] = []
    oa = owner(a.instance, lease=1.2, on_lost=lost.append)
    a.append(Created(conversation_id="c1", ts="t", title="c1"))
    taken, ended = oa.claim("a1", "c1"), oa.claim("a2", "c1")
    a.hold("a2", ended)
    a.append(started("c1", "a2"))
    a.append(persisted("c1", "a2"))
    assert a.flush_sync() and sql(database_url, "SELECT attempt_id FROM attempt_owners") == [("a1",)]
    a.append(Selected(conversation_id="c1", ts="t", message_id="m-a2", attempt_id="a2"))  # not of the run: no epoch
    assert a.flush_sync(), "an event outside the attempt's run is not fenced, even while the attempt is held"
    sql(database_url, "UPDATE attempt_owners SET epoch = nextval('ledger_epochs') WHERE attempt_id = 'a1'")
    wait_until_blocking(lambda: lost == ["a1"], timeout=5, what="renewal finding a1 taken")
    oa.claim("a3", "c1")
    sql(database_url, "DELETE FROM attempt_owners WHERE attempt_id = 'a3'")  # gone without an end
    wait_until_blocking(lambda: lost == ["a1", "a3"], timeout=5, what="renewal finding a3 gone")
    time.sleep(NOTHING_MORE_WINDOW)
    assert lost == ["a1", "a3"] and oa.held == {} and taken > 0


def test_expired_lists_only_rows_whose_lease_passed_by_the_database_clock_after_the_restart_grace(
    opened, database_url
) -> None:
    store, owner = opened
    store()  # the schema
    ob = owner("b")
    insert = (
        "INSERT INTO attempt_owners (attempt_id, conversation_id, owner, owner_until, lease_seconds) "
        "VALUES (%s, 'c', 'a', now() + make_interval(secs => %s), %s)"
    )
    for aid, until, lease in [("live", 3600, 5), ("gone", -1, 1), ("in-grace", -1, 10**8)]:
        sql(database_url, insert, (aid, until, lease))
    held = ob.claim("mine", "c")
    sql(database_url, "UPDATE attempt_owners SET owner_until = now() - interval '1 s' WHERE attempt_id = 'mine'")
    assert [(o.attempt_id, o.owner) for o in ob.expired()] == [("gone", "a")]
    grace_epoch = int(str(sql(database_url, "SELECT epoch FROM attempt_owners WHERE attempt_id = 'in-grace'")[0][0]))
    assert ob.take_over("in-grace", grace_epoch) is None and held > 0, "a whole lease after the server's start"

    oa = owner("a", lease=1.0)
    before = time.monotonic()
    oa.claim("short", "c")
    oa.forget("short")
    wait_until_blocking(lambda: "short" in [o.attempt_id for o in ob.expired()], timeout=10, what="the lease passing")
    assert time.monotonic() - before >= 1.0, "never listed before its lease passed"


def test_the_janitor_removes_rows_of_ended_attempts_only(opened, database_url) -> None:
    store, owner = opened
    a = store()
    a.append(Created(conversation_id="c1", ts="t", title="c1"))
    for event in [started("c1", "ended"), persisted("c1", "ended"), started("c1", "running")]:
        a.append(event)
    assert a.flush_sync()
    insert = (
        "INSERT INTO attempt_owners (attempt_id, conversation_id, owner, owner_until, lease_seconds) "
        "VALUES (%s, 'c1', 'x', now() + make_interval(secs => %s), 1)"
    )
    for aid, until in [("ended", -5), ("never-started", -5), ("running", -5), ("just-expired", 0)]:
        sql(database_url, insert, (aid, until))
    assert sorted(owner("b").janitor()) == ["ended", "never-started"]
    assert sorted(str(r[0]) for r in sql(database_url, "SELECT attempt_id FROM attempt_owners")) == [
        "just-expired",
        "running",
    ]


def test_a_batch_re_sent_after_its_commit_acknowledgement_was_lost_counts_as_written(opened, database_url) -> None:
    store, _ = opened
    a = store()
    events: list[AnyEvent] = [a.append(Created(conversation_id="c1", ts="t", title="c1"))]
    events += [a.append(chunk("c1", "x", n)) for n in range(3)]
    assert a.flush_sync()
    saved, failed, error = a.write({"c1": events})  # what the writer does when the COMMIT's answer never came
    assert (saved, failed, error) == (4, {}, None) and list(a.events("c1")) == events
    assert not a.problems and sql(database_url, "SELECT count(*) FROM events") == [(4,)]


def test_a_session_frozen_inside_a_batch_transaction_frees_its_row_locks_for_the_survivors(
    opened, database_url: str
) -> None:
    """A SIGSTOPped instance may be frozen between a batch's UPDATE of its conversation row and the COMMIT: the
    server ends that session after ``IDLE_IN_TRANSACTION`` s, so another instance's takeover is not blocked for as
    long as the freeze lasts."""
    store, _ = opened
    first = store()
    first.append(Created(conversation_id="c1", title=""))
    assert first.flush_sync(10)
    frozen_pool = make_pool(database_url, "frozen", max_size=1, instance="frozen-instance")
    try:
        with frozen_pool.connection() as frozen:
            frozen.execute("BEGIN")
            frozen.execute("UPDATE conversations SET updated = now() WHERE id = 'c1'")  # the row is locked now
            with psycopg.connect(database_url, autocommit=True) as survivor:
                survivor.execute(f"SET statement_timeout = '{int(IDLE_IN_TRANSACTION * 3)}s'")  # else: never freed
                survivor.execute("UPDATE conversations SET updated = now() WHERE id = 'c1'")
            with pytest.raises(psycopg.errors.IdleInTransactionSessionTimeout):
                frozen.execute("COMMIT")  # the frozen session was ended: what it did is rolled back
    finally:
        frozen_pool.close()


def test_a_takeover_ends_the_sessions_of_the_expired_owner_so_a_transaction_it_froze_in_blocks_nothing(
    opened, database_url: str
) -> None:
    """A COPY whose client froze half-way is neither idle (no idle timeout) nor cancelled while the server waits for
    its data: here the stand-in is a transaction with the idle timeout turned off, holding the owner row locked."""
    store, owner = opened
    store()  # the schema
    oa, ob = owner("instance-a", lease=1.0), owner("instance-b")
    epoch = oa.claim("frozen-attempt", "c")
    oa.forget("frozen-attempt")  # a's renewals stop: it froze
    frozen_pool = make_pool(database_url, "a-frozen", max_size=1, instance="instance-a")
    try:
        with frozen_pool.connection() as frozen:
            frozen.execute("SET idle_in_transaction_session_timeout = 0")
            frozen.execute("BEGIN")
            frozen.execute("SELECT 1 FROM attempt_owners WHERE attempt_id = 'frozen-attempt' FOR UPDATE")
            expired = lambda: [o.owner for o in ob.expired()] == ["instance-a"]  # noqa: E731
            wait_until_blocking(expired, timeout=10, what="a's lease passing")  # as the sweep asks
            new = ob.take_over("frozen-attempt", epoch)  # else it would wait for the lock (statement_timeout)
            assert new is not None and new > epoch
            with pytest.raises(psycopg.OperationalError):
                frozen.execute("COMMIT")  # its session was ended: nothing it still had open is committed
    finally:
        frozen_pool.close()


def test_an_event_given_the_seq_of_a_dropped_tail_carries_none_of_its_epochs_and_is_written(
    opened, database_url
) -> None:
    store, owner = opened
    a = store()
    owners = owner(a.instance)
    a.append(Created(conversation_id="c1", ts="t", title="c1"))
    assert a.flush_sync()
    a.hold("a1", owners.claim("a1", "c1"))
    a.append(started("c1", "a1"))
    with psycopg.connect(database_url) as blocker:  # the batch's fence waits for this row lock
        blocker.execute("SELECT 1 FROM conversations WHERE id = 'c1' FOR UPDATE")
        flushing = threading.Thread(target=a.flush_sync)
        flushing.start()
        wait_until_blocking(lambda: sql(database_url, WAITING_ON_A_LOCK), what="the batch waiting for the row lock")
        behind = [a.append(chunk("c1", "a1", n)) for n in range(3)]  # queued behind the batch in flight
        blocker.execute(TAKEN_BY_ANOTHER)
    flushing.join()  # the lease was lost: the batch and what is queued behind it are dropped; their seqs given again
    assert [e.seq for e in a.events("c1")] == [1]
    after = [a.append(Renamed(conversation_id="c1", ts="t", title=f"after the dropped tail {n}")) for n in range(4)]
    assert after[-1].seq == behind[-1].seq and a.flush_sync(), "written: no epoch of the dropped events"
    assert sql(database_url, "SELECT kind, epoch FROM events WHERE conversation_id = 'c1' ORDER BY seq") == [
        ("created", None), *[("renamed", None)] * 4,
    ]  # fmt: skip
