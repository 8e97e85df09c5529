"""The TinyDB store's append-only files: a batch adds a record to the conversation's log (the compacted file is not
rewritten), a torn or damaged tail is cut back, kept aside and reported, a log is compacted once it is as big as
its file, and a folder written before logs existed opens as it is and grows a log beside each file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tinydb import TinyDB

from ledger.events.core import Renamed
from store.tinydb import logfile
from store.tinydb.logfile import ConversationLog
from store.tinydb.store import Store
from tests.support.ledger_builders import answer_events, conversation_events
from tests.support.stores import write_tinydb_folder
from tests.support.waiting import wait_until_blocking


def grown(folder: Path, answers: int = 3) -> tuple[Store, list]:
    """A store with conversation c1 written in ``answers`` + 1 batches (the first its compacted file)."""
    store = Store.open(folder, flush_interval=60)
    written = [store.append(e) for e in conversation_events("c1", answers=1, chunks=5)]
    assert store.flush_sync()
    for turn in range(2, answers + 2):
        written += [store.append(e) for e in answer_events("c1", turn, 5)]
        assert store.flush_sync()
    return store, written


def test_a_batch_after_the_first_is_appended_to_the_log_and_the_compacted_file_is_not_rewritten(
    tmp_path: Path,
) -> None:
    store = Store.open(tmp_path, flush_interval=60)
    first = [store.append(e) for e in conversation_events("c1", answers=1, chunks=5)]
    assert store.flush_sync()
    compacted = (tmp_path / "conv-c1.json").stat()
    assert not (tmp_path / "conv-c1.log").exists(), "a new conversation's first batch is its compacted file"
    later = [store.append(e) for e in answer_events("c1", 2, 5)]
    assert store.flush_sync()
    after = (tmp_path / "conv-c1.json").stat()
    assert (after.st_ino, after.st_mtime_ns, after.st_size) == (
        compacted.st_ino,
        compacted.st_mtime_ns,
        compacted.st_size,
    )
    assert 0 < (tmp_path / "conv-c1.log").stat().st_size < compacted.st_size * 2
    store.close()
    reopened = Store.open(tmp_path)
    assert list(reopened.events("c1")) == first + later and reopened.problems == []
    reopened.close()


def test_a_torn_tail_is_cut_back_kept_aside_and_reported_and_the_seqs_go_on(tmp_path: Path) -> None:
    store, written = grown(tmp_path)
    store.close()
    log = tmp_path / "conv-c1.log"
    whole = log.read_bytes()
    torn = whole + whole[8:40]  # a record whose write a crash cut short: a header and part of its payload
    log.write_bytes(torn)
    reopened = Store.open(tmp_path)
    assert list(reopened.events("c1")) == written
    (report,) = reopened.problems
    assert (
        "c1" in report and "cut short" in report and "cut back" in report and "kept at conv-c1.log.corrupt-" in report
    )
    (aside,) = tmp_path.glob("conv-c1.log.corrupt-*")
    assert aside.read_bytes() == whole[8:40] and log.read_bytes() == whole
    assert reopened.append(Renamed(conversation_id="c1", ts="", title="after")).seq == len(written) + 1
    reopened.close()
    again = Store.open(tmp_path)
    assert len(again.events("c1")) == len(written) + 1 and again.problems == [], "cut once, not reported again"
    again.close()


def test_a_flipped_byte_cuts_the_log_back_to_the_record_before_it_with_the_rest_kept_aside(tmp_path: Path) -> None:
    store, written = grown(tmp_path, answers=3)
    store.close()
    log = tmp_path / "conv-c1.log"
    whole = bytearray(log.read_bytes())
    first_record = 8 + 8 + int.from_bytes(whole[8:12], "little")  # magic, header, payload
    whole[first_record + 20] ^= 0x01  # one bit of the second record's payload
    log.write_bytes(bytes(whole))
    reopened = Store.open(tmp_path)
    events = reopened.events("c1")
    assert list(events) == written[: len(events)] and [e.seq for e in events] == list(range(1, len(events) + 1))
    assert len(events) == len(written) - 2 * len(answer_events("c1", 2, 5)), "the second and third batches are cut"
    (report,) = reopened.problems
    assert "record 2 does not match its checksum" in report and "1 complete record(s)" in report
    (aside,) = tmp_path.glob("conv-c1.log.corrupt-*")
    assert aside.read_bytes() == bytes(whole[first_record:]) and log.stat().st_size == first_record
    reopened.close()


def test_a_damaged_log_in_a_read_only_open_is_reported_and_nothing_changes(tmp_path: Path) -> None:
    store, written = grown(tmp_path)
    store.close()
    log = tmp_path / "conv-c1.log"
    log.write_bytes(log.read_bytes() + b"\x05\x00\x00\x00torn")
    before = sorted(p.name for p in tmp_path.iterdir())
    reader = Store.open(tmp_path, read_only=True)
    assert list(reader.events("c1")) == written
    assert any("c1" in p and "read to the" in p for p in reader.problems), reader.problems
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_log_as_big_as_its_file_is_compacted_by_the_writer_and_reads_back_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logfile, "COMPACT_FROM", 1)
    store, written = grown(tmp_path, answers=6)
    path, log = tmp_path / "conv-c1.json", tmp_path / "conv-c1.log"

    def compacted() -> bool:
        return len(json.loads(path.read_bytes())["events"]) > 7 and (
            not log.exists() or log.stat().st_size < path.stat().st_size
        )

    wait_until_blocking(compacted, what="a compaction after a batch")  # the first batch alone is 7 documents
    store.close()
    reopened = Store.open(tmp_path)
    assert list(reopened.events("c1")) == written and reopened.problems == []
    reopened.close()


def test_a_compaction_killed_before_it_removed_the_log_reads_no_event_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, written = grown(tmp_path, answers=3)
    store.close()
    log = tmp_path / "conv-c1.log"
    kept = log.read_bytes()
    ConversationLog(tmp_path / "conv-c1.json").compact()
    assert not log.exists()
    log.write_bytes(kept)  # as if the process died after the rename, before the log was removed
    reopened = Store.open(tmp_path)
    assert list(reopened.events("c1")) == written and reopened.problems == []
    more = reopened.append(Renamed(conversation_id="c1", ts="", title="after"))
    reopened.close()
    assert list(Store.open(tmp_path, read_only=True).events("c1")) == [*written, more]


def test_a_folder_written_before_logs_opens_as_it_is_and_grows_a_log_beside_each_file(tmp_path: Path) -> None:
    stored = write_tinydb_folder(tmp_path, {"old": conversation_events("old", answers=2, chunks=4)})
    before = (tmp_path / "conv-old.json").read_bytes()
    store = Store.open(tmp_path)
    assert list(store.events("old")) == stored["old"] and store.problems == []
    more = [store.append(e) for e in answer_events("old", 3, 4)]
    store.close()
    assert (tmp_path / "conv-old.json").read_bytes() == before, "read as it is, never converted"
    assert (tmp_path / "conv-old.log").exists()
    assert list(Store.open(tmp_path, read_only=True).events("old")) == stored["old"] + more


def test_tinydb_reads_the_documents_of_both_files_and_an_insert_only_appends(tmp_path: Path) -> None:
    store, written = grown(tmp_path)
    store.close()
    log_size = (tmp_path / "conv-c1.log").stat().st_size
    db = TinyDB(tmp_path / "conv-c1.json", storage=ConversationLog)
    docs = db.table("events").all()
    assert sum(len(d["rows"]) if d["kind"] == "chunk_batch" else 1 for d in docs) == len(written)
    db.table("events").insert({"kind": "renamed", "seq": len(written) + 1, "ts": "", "title": "by TinyDB"})
    db.close()
    assert (tmp_path / "conv-c1.log").stat().st_size > log_size
    events = Store.open(tmp_path, read_only=True).events("c1")
    assert len(events) == len(written) + 1 and events[-1].title == "by TinyDB"
