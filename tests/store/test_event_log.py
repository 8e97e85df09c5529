"""How a store keeps a conversation's events in memory (``store.event_log``): what is read back is what was
appended, and a long answer does not add objects for the garbage collector to walk (issue 11)."""

from __future__ import annotations

import gc

from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.events.core import AnyEvent, Chunk, Renamed, StaleChunk
from store.api import EventStore
from store.event_log import BLOCK, EventLog
from tests.support.ledger_builders import answer_events, conversation_events
from tests.support.stores import StoreMaker
from tests.support.waiting import wait_until_blocking


def chunk(seq: int, text: str, block: str = "text", cid: str = "c1") -> Chunk:
    return Chunk(
        conversation_id=cid,
        seq=seq,
        ts=f"2026-11-30T08:00:{seq % 60:02d}.000Z",
        attempt_id="a1",
        request_id="r1",
        chunk_seq=seq,
        text=text,
        block=block,
    )


def other(seq: int, kind: int) -> AnyEvent:
    if kind == 0:
        return Renamed(conversation_id="c1", seq=seq, ts="t", title=f"title {seq}")
    return StaleChunk(
        conversation_id="c1", seq=seq, ts="t", attempt_id="a1", request_id="r1", chunk_seq=seq, why="closed"
    )


items = st.lists(
    st.one_of(
        st.tuples(st.just("chunk"), st.text(max_size=4), st.sampled_from(["text", "reasoning"])),
        st.tuples(st.just("other"), st.integers(0, 1), st.just("")),
    ),
    max_size=3 * BLOCK,
)


@settings(max_examples=60, deadline=None)
@given(items)
def test_a_log_gives_back_equal_events_in_the_order_they_were_appended(plan: list[tuple[str, object, str]]) -> None:
    appended: list[AnyEvent] = []
    log = EventLog("c1")
    for seq, (what, value, block) in enumerate(plan, start=1):
        event = chunk(seq, str(value), block) if what == "chunk" else other(seq, int(str(value)))
        log.append(event)
        appended.append(event)
    copy = log.copy()
    log.append(chunk(len(plan) + 1, "after the copy"))
    assert list(copy.events()) == appended
    assert copy.last_seq == len(plan) and len(copy) == len(plan)
    assert list(log.events()) == [*appended, chunk(len(plan) + 1, "after the copy")]


def test_a_chunk_with_a_field_that_is_not_a_plain_value_is_kept_as_it_was_appended() -> None:
    class Text(str):
        pass

    odd = chunk(1, Text("odd"))
    log = EventLog("c1", [odd])
    assert log.events()[0] is odd


def test_a_long_answer_read_back_after_a_reopen_equals_what_was_appended(stores: StoreMaker) -> None:
    store = stores.open()
    written = [store.append(e) for e in conversation_events("c1", answers=1, chunks=2 * BLOCK + 7)]
    written += [store.append(e) for e in answer_events("c1", 2, 3 * BLOCK)]
    assert list(store.events("c1")) == written
    assert store.close() == 0
    reopened = stores.open()
    assert list(reopened.events("c1")) == written
    more = reopened.append(chunk(0, "one more", "reasoning"))
    assert list(reopened.events("c1")) == [*written, more] and more.seq == len(written) + 1
    assert reopened.all_events() == [*written, more]


def tracked_after(store: EventStore, events: list[AnyEvent]) -> int:
    for event in events:
        store.append(event)
    assert store.flush_sync()
    compacting = getattr(store, "compacting", lambda: False)  # TinyDB: a log's compaction parses it on the writer
    wait_until_blocking(lambda: not compacting(), 30, "the writer's compaction is over")
    gc.collect()
    return len(gc.get_objects())


def test_saved_chunks_add_almost_nothing_for_the_garbage_collector_to_walk(stores: StoreMaker) -> None:
    store = stores.open()
    events = conversation_events("c1", answers=1, chunks=6000)
    head, chunks = events[:4], [e for e in events if isinstance(e, Chunk)]
    before = tracked_after(store, [*head, *chunks[:100]])
    after = tracked_after(store, chunks[100:])
    assert after - before < 300, f"{after - before} more tracked objects for {len(chunks) - 100} chunks"
