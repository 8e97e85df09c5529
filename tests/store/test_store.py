"""What only the TinyDB store does, on real files in temp dirs: what is on disk within the flush interval, chunk
runs stored as batches, a damaged file or index recovered and reported, a deleted conversation's file gone, a full
disk retried. The contract both stores keep (seqs, reopening, many conversations, odd text, deletion) is written
once, in ``test_store_contract.py``, and runs for each.

Stores come from ``tinydb_stores`` (``tests/store/conftest.py``): opened on the test's one data folder, closed
after the test.
"""

from __future__ import annotations

import json

import pytest

from ledger.codec import to_dict
from ledger.errors import ConversationDeletedError
from ledger.events.core import Chunk, Deleted, Renamed
from tests.support.ledger_builders import conversation_events
from tests.support.stores import StoreMaker, fill
from tests.support.waiting import wait_until_blocking


def test_chunks_are_durable_within_the_flush_interval_without_a_terminal_event(tinydb_stores: StoreMaker) -> None:
    store = tinydb_stores.open(flush_interval=0.05)
    events = conversation_events("c1", answers=1, chunks=5)[:5]  # created .. first chunks, no end
    fill(store, events)
    store.flush_sync()
    on_disk = json.loads((tinydb_stores.folder / "conv-c1.json").read_text())["events"]
    rows = sum(len(d.get("rows", [None])) for d in on_disk.values())
    assert rows == 5


def test_chunk_runs_are_stored_as_batches(tinydb_stores: StoreMaker) -> None:
    store = tinydb_stores.open()
    fill(store, conversation_events("c1", answers=1, chunks=50))
    store.close()
    docs = json.loads((tinydb_stores.folder / "conv-c1.json").read_text())["events"]
    assert len(docs) < 10
    per_event = len(
        json.dumps(
            to_dict(
                Chunk(
                    conversation_id="c1",
                    attempt_id="a1",
                    request_id="r1",
                    chunk_seq=1,
                    text="word1 ",
                    ts="2026-11-30T08:00:00.130+00:00",
                )
            )
        )
    )
    assert (tinydb_stores.folder / "conv-c1.json").stat().st_size < 50 * per_event / 2


def test_truncated_file_is_recovered_with_a_clear_report_and_others_intact(tinydb_stores: StoreMaker) -> None:
    store = tinydb_stores.open()
    keep = fill(store, conversation_events("keep", answers=2, chunks=10))
    fill(store, conversation_events("hurt", answers=2, chunks=10))
    store.close()
    path = tinydb_stores.folder / "conv-hurt.json"
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * 0.6)])

    reopened = tinydb_stores.open()
    assert list(reopened.events("keep")) == keep
    recovered = reopened.events("hurt")
    assert 0 < len(recovered) < 32
    assert [e.seq for e in recovered] == list(range(1, len(recovered) + 1))
    (report,) = reopened.problems
    assert "hurt" in report and "damaged" in report and "kept at conv-hurt.json.corrupt-" in report
    assert len(list(tinydb_stores.folder.glob("conv-hurt.json.corrupt-*"))) == 1
    assert reopened.append(Renamed(conversation_id="hurt", ts="", title="x")).seq == len(recovered) + 1


def test_garbage_file_is_kept_aside_and_the_app_still_opens(tinydb_stores: StoreMaker) -> None:
    store = tinydb_stores.open()
    keep = fill(store, conversation_events("keep", answers=1, chunks=5))
    store.close()
    (tinydb_stores.folder / "conv-junk.json").write_bytes(b"\x00\xffnot json at all{{{")
    reopened = tinydb_stores.open()
    assert list(reopened.events("keep")) == keep
    assert reopened.events("junk") == ()
    assert any("junk" in p and "recovered 0" in p for p in reopened.problems)


def test_damaged_index_is_rebuilt_from_the_files(tinydb_stores: StoreMaker) -> None:
    store = tinydb_stores.open()
    keep = fill(store, conversation_events("keep", answers=1, chunks=5))
    store.close()
    (tinydb_stores.folder / "index.json").write_text('{"conversations": {"1": {"id": ')
    reopened = tinydb_stores.open()
    assert list(reopened.events("keep")) == keep
    assert any("index" in p for p in reopened.problems)


def test_a_deleted_conversations_file_is_gone_and_a_refused_write_does_not_make_it_again(
    tinydb_stores: StoreMaker,
) -> None:
    store = tinydb_stores.open()
    fill(store, conversation_events("c1", answers=1, chunks=5))
    store.append(Deleted(conversation_id="c1", ts=""))
    store.close()
    assert not (tinydb_stores.folder / "conv-c1.json").exists()
    reopened = tinydb_stores.open()
    with pytest.raises(ConversationDeletedError):
        reopened.append(Renamed(conversation_id="c1", ts="", title="after restart"))
    reopened.close()
    assert not (tinydb_stores.folder / "conv-c1.json").exists()


def test_a_failed_write_is_retried_and_nothing_is_lost_or_doubled(
    tinydb_stores: StoreMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    real_replace, failures = os.replace, {"left": 3}

    def full_disk(src, dst):
        if failures["left"] > 0:
            failures["left"] -= 1
            raise OSError(28, "No space left on device")
        return real_replace(src, dst)

    store = tinydb_stores.open(flush_interval=0.02)
    first = [store.append(e) for e in conversation_events("c1", 1, 5)]
    assert store.flush_sync()
    monkeypatch.setattr(os, "replace", full_disk)
    second = [store.append(e) for e in conversation_events("c1", 1, 4)[1:]]
    assert not store.flush_sync(timeout=10), "a failed write is reported, not waited out in silence"
    health = store.health()
    assert health.saving_fails is not None and "the disk is full" in health.saving_fails
    assert health.unsaved == len(second)
    wait_until_blocking(lambda: store.flush_sync(timeout=10), what="the retried write")
    assert failures["left"] == 0 and store.health().ok and store.problems == []
    store.close()
    monkeypatch.setattr(os, "replace", real_replace)
    assert list(tinydb_stores.open().events("c1")) == first + second
    assert not list(tinydb_stores.folder.glob(".conv-*.tmp")), "temp files of failed writes are cleaned up"
