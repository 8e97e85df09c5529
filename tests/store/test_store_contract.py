"""The store contract (``store.api``), one suite run against every store: TinyDB files and PostgreSQL.

Each test runs for both (``stores`` is parametrized), on real files in a temp dir and on a fresh database of a real
PostgreSQL server; what it asserts is what the ledger proves after reopening, never a store's insides. Some run in
more than one shape as well: at the suite's short flush interval and at the stores' own (``FLUSHES``), with a
hundred conversations of two hundred chunks, odd text alone and around an answer. What only one store does is in
``test_store.py`` (TinyDB's files) and ``test_pg_store.py`` (instances on one database).
"""

from __future__ import annotations

import subprocess
from dataclasses import replace

import pytest

from ledger.errors import ConversationDeletedError, UnknownConversationError
from ledger.events.core import Created, Deleted, Renamed, Submitted, TextRef, ToolCalled, ToolResult
from ledger.reducer import replay
from ledger.summary import summary_of
from ledger.usage import buried_rows, usage_of, usage_rows
from tests.support.app_process import ROOT
from tests.support.ledger_builders import conversation_events
from tests.support.stores import StoreMaker, fill

#: How often a store writes what was appended: the suite's short interval, and the stores' own (250 ms), after which
#: ``close`` has to write most of a conversation itself.
FLUSHES = pytest.mark.parametrize("flush_interval", [0.05, 0.25], ids=["flush-50ms", "flush-250ms"])


@FLUSHES
def test_appended_events_get_consecutive_seqs_and_come_back_identical_after_reopening(
    stores: StoreMaker, flush_interval: float
) -> None:
    store = stores.open(flush_interval=flush_interval)
    written = fill(store, conversation_events("c1", answers=3, chunks=20))
    assert [e.seq for e in written] == list(range(1, len(written) + 1))
    assert list(store.events("c1")) == written, "readable at once, before it is durable"
    assert store.close() == 0
    reopened = stores.open(flush_interval=flush_interval)
    assert list(reopened.events("c1")) == written
    assert reopened.problems == [] and reopened.health().ok


@FLUSHES
def test_seqs_go_on_after_a_reopen(stores: StoreMaker, flush_interval: float) -> None:
    store = stores.open(flush_interval=flush_interval)
    fill(store, conversation_events("c1", answers=1, chunks=3))
    store.close()
    store = stores.open(flush_interval=flush_interval)
    event = store.append(Renamed(conversation_id="c1", ts="x", title="new"))
    assert event.seq == len(store.events("c1")) == 10


@pytest.mark.parametrize(
    ("count", "answers", "chunks"), [(30, 2, 15), (100, 1, 200)], ids=["30-chats", "100-chats-of-200-chunks"]
)
def test_a_reopened_store_replays_to_the_same_state_for_many_conversations(
    stores: StoreMaker, count: int, answers: int, chunks: int
) -> None:
    store = stores.open()
    written = {}
    for n in range(count):
        written[f"c{n:03d}"] = fill(store, conversation_events(f"c{n:03d}", answers=answers, chunks=chunks))
    before = replay(store.all_events())
    store.close()
    reopened = stores.open()
    assert sorted(reopened.conversation_ids()) == sorted(written)
    assert all(list(reopened.events(cid)) == events for cid, events in written.items())
    assert replay(reopened.all_events()) == before == replay(e for events in written.values() for e in events)
    assert all(before.conversations[cid].attempts["a1"].text for cid in written), "every answer kept its text"


def test_events_are_durable_after_flush_without_any_event_that_ends_an_answer(stores: StoreMaker) -> None:
    store = stores.open()
    written = fill(store, conversation_events("c1", answers=1, chunks=5)[:6])  # created .. chunks, no end
    assert store.flush_sync() and store.health().unsaved == 0
    reader = stores.open(read_only=True)
    assert list(reader.events("c1")) == written


def test_a_deleted_conversation_refuses_writes_and_stays_deleted_after_reopening(stores: StoreMaker) -> None:
    store = stores.open()
    fill(store, conversation_events("c1", answers=1, chunks=5))
    keep = fill(store, conversation_events("c2", answers=1, chunks=2))
    store.append(Deleted(conversation_id="c1", ts=""))
    with pytest.raises(ConversationDeletedError):
        store.append(Renamed(conversation_id="c1", ts="", title="late"))
    assert store.conversation_ids() == ["c2"] and store.all_events() == keep
    store.close()
    reopened = stores.open()
    assert reopened.conversation_ids() == ["c2"] and reopened.is_deleted("c1")
    with pytest.raises(ConversationDeletedError):
        reopened.append(Renamed(conversation_id="c1", ts="", title="after restart"))
    assert reopened.all_events() == keep


def test_a_deleted_conversation_keeps_its_deleted_event_with_what_it_spent_across_a_reopen(stores: StoreMaker) -> None:
    store = stores.open()
    events = fill(store, conversation_events("c1", answers=2, chunks=3))
    conv = replay(events).conversations["c1"]
    kept = store.append(Deleted(conversation_id="c1", ts="2026-01-02T00:00:00.000Z", owner="local:ann",
                                usage=usage_of(conv)))  # fmt: skip
    fill(store, conversation_events("c2", answers=1, chunks=1))
    store.append(Deleted(conversation_id="c2", ts=""))  # a tombstone as older versions wrote it: nothing kept
    assert len(kept.usage) == 2 and store.tombstones()["c1"] == kept
    store.close()
    reopened = stores.open()
    graves = reopened.tombstones()
    assert graves["c1"] == kept and graves["c2"].usage == () and reopened.conversation_ids() == []
    assert buried_rows(graves["c1"]) == tuple(r._replace(owner="local:ann", deleted=True) for r in usage_rows(conv))
    assert all(r.owner == "local:ann" and r.deleted for r in buried_rows(graves["c1"]))
    reopened.close()
    assert stores.open().tombstones() == graves, "kept as read: a rewrite of the index keeps it too"


@pytest.mark.parametrize("around_an_answer", [False, True], ids=["alone", "around-an-answer"])
def test_text_no_database_column_can_hold_is_stored_and_read_back_exactly(
    stores: StoreMaker, around_an_answer: bool
) -> None:
    store = stores.open()
    answer = conversation_events("c1", answers=1, chunks=3)[1:] if around_an_answer else []  # a whole answer
    odd = [
        Created(conversation_id="c1", ts="2026-01-01T00:00:00.000Z", title="nul \x00 inside"),
        *answer,
        Renamed(conversation_id="c1", ts="", title="half an emoji \ud83d and more"),
        Renamed(conversation_id="c1", ts="\ud800", title='quotes " \\ and \u2028 line'),
    ]
    written = fill(store, odd)
    store.close()
    assert stores.open().events("c1") == tuple(written)


def test_an_unknown_conversation_is_named_as_unknown(stores: StoreMaker) -> None:
    store = stores.open()
    with pytest.raises(UnknownConversationError, match="nope"):
        store.events("nope")


def test_two_processes_appending_to_one_conversation_never_collide_or_reorder(stores: StoreMaker) -> None:
    store = stores.open()
    store.append(Created(conversation_id="shared", ts="t", title="shared"))
    store.close()
    children = [
        subprocess.Popen(stores.child(name, 60), cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for name in ("a", "b")
    ]
    outputs = []
    try:
        ready = [child.stdout.readline().strip().split(" ", 1)[0] for child in children]
        for child in children:
            if child.poll() is None:
                child.stdin.write("go\n")
                child.stdin.flush()
        outputs = [child.communicate(timeout=120)[0] for child in children]
    finally:
        for child in children:
            child.kill()
    accepted = {name: 60 if "DONE 60" in out else 0 for name, out in zip("ab", outputs, strict=True)}
    if stores.kind == "tinydb":
        assert sorted(ready) == ["READY", "REFUSED"], "one process per data folder: the second is refused"
    else:
        assert ready == ["READY", "READY"] and accepted == {"a": 60, "b": 60}, outputs
    events = stores.open().events("shared")
    assert [e.seq for e in events] == list(range(1, 1 + sum(accepted.values()) + 1))
    titles = [e.title for e in events[1:]]
    for name, count in accepted.items():
        assert [t for t in titles if t.startswith(f"{name}-")] == [f"{name}-{i}" for i in range(count)]
    if stores.kind == "postgres":
        switches = sum(1 for x, y in zip(titles, titles[1:], strict=False) if x[0] != y[0])
        assert switches >= 2, "the two writers took turns on the one conversation"


def test_summaries_say_title_times_and_open_attempts_and_equal_the_replayed_ones_after_reopening(
    stores: StoreMaker,
) -> None:
    store = stores.open()
    fill(store, conversation_events("done", answers=2, chunks=3))
    fill(store, conversation_events("open", answers=1, chunks=3)[:-2])  # streaming: no done, no persisted
    fill(store, conversation_events("gone", answers=1, chunks=1))
    store.append(Deleted(conversation_id="gone", ts=""))
    store.append(Renamed(conversation_id="done", ts="2026-11-30T09:00:00.000+00:00", title="renamed"))
    expected = {cid: summary_of(replay(store.events(cid)).conversations[cid]) for cid in ("done", "open")}
    assert {s.conversation_id: s for s in store.summaries()} == expected
    assert expected["open"].open_attempts == ("a1",) and expected["done"].title == "renamed"
    assert store.close() == 0
    reopened = stores.open()
    assert {s.conversation_id: s for s in reopened.summaries()} == expected


def test_a_forgotten_conversation_is_read_again_identical_and_its_seqs_go_on(stores: StoreMaker) -> None:
    store = stores.open()
    written = fill(store, conversation_events("c1", answers=2, chunks=4))
    assert store.flush_sync()
    store.forget("c1")
    assert list(store.events("c1", keep=False)) == written
    event = store.append(Renamed(conversation_id="c1", ts="x", title="after"))
    assert event.seq == len(written) + 1 and list(store.events("c1")) == [*written, event]


def test_a_message_and_a_tool_result_over_the_bound_come_back_as_their_preview_and_reference(
    stores: StoreMaker,
) -> None:
    whole = TextRef(sha256="ab" * 32, size=3_000_000, chars=2_900_000)  # the blob itself is the blob store's
    store = stores.open()
    events = conversation_events("c1", answers=1, chunks=2)
    events[1] = replace(events[1], whole=whole)  # the user message
    ids = {"conversation_id": "c1", "attempt_id": "a1"}
    events += [
        ToolCalled(**ids, step=1, call_id="k", name="dump", arguments="{}"),
        ToolResult(**ids, call_id="k", status="ok", content="first part", size=whole.chars, whole=whole),
    ]
    written = fill(store, events)
    store.close()
    again = stores.open().events("c1")
    assert again == tuple(written) and {e.whole for e in again if isinstance(e, Submitted | ToolResult)} == {whole}
