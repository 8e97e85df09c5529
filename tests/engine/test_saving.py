"""Saving fails loudly, never silently: on a real full disk (a small tmpfs) and a real read-only folder.

What is checked is what the store and the engine report (the page's banner reads the same ``health()``), what
the log says, and what the files hold after space returns and a reopen.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from engine.commands.engine import InputRejected
from ledger.events.core import Renamed
from store.tinydb.reserve import RESERVE_NAME
from store.tinydb.store import Store
from tests.support.engine import EngineFactory
from tests.support.folders import fill, read_only_folder, small_disk
from tests.support.ledger_builders import conversation_events
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until, wait_until_blocking


def saving_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("Saving fails")]


def test_a_full_disk_is_reported_at_once_kept_in_memory_and_saved_when_space_returns(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with small_disk(tmp_path / "disk", 256) as disk:
        store = Store.open(disk, flush_interval=0.02)
        first = [store.append(e) for e in conversation_events("c1", answers=1, chunks=5)]
        assert store.flush_sync()
        filler = fill(disk)
        more = [store.append(e) for e in conversation_events("c1", answers=1, chunks=300)[1:]]
        # no timeout: flush_sync returns only when the write is done or has failed, so returning at all is the proof
        # that the failure is reported rather than waited out (a hang fails at pytest-timeout's limit, with a stack)
        assert not store.flush_sync(timeout=None), "a failed write is reported, not waited out"
        health = store.health()
        assert health.saving_fails is not None and "the disk is full" in health.saving_fails
        assert health.unsaved == len(more) and list(store.events("c1")) == first + more

        wait_until_blocking(lambda: store.health().failed_tries >= 4, what="retries with backoff")
        (problem,) = store.health().problems
        assert problem.kind == "saving" and problem.count >= 4
        assert len(saving_lines(caplog)) == 1, "one log line per distinct problem, however often it repeats"

        filler.unlink()
        wait_until_blocking(lambda: store.health().ok, timeout=5, what="saving works again")
        assert store.problems == [] and store.health().unsaved == 0
        assert any("saving works again" in r.getMessage() for r in caplog.records)
        assert store.close() == 0
        reopened = Store.open(disk)
        assert list(reopened.events("c1")) == first + more
        reopened.close()


def test_a_write_that_still_fits_on_a_full_disk_is_saved_and_the_full_disk_reported_at_once(tmp_path: Path) -> None:
    """A log's small record fits in the slack of its last block on a full disk: saved, and yet the next writes
    will fail. The banner came only once a later record no longer fit (seconds into an answer, or never)."""
    with small_disk(tmp_path / "disk", 256) as disk:
        store = Store.open(disk, flush_interval=0.02, reserve_bytes=0)
        events = conversation_events("c1", answers=1, chunks=3)  # Created .. Started, RequestSent, 3 chunks, Done ..
        first = [store.append(e) for e in events[:5]]
        assert store.flush_sync()
        first.append(store.append(events[5]))  # a chunk: no index to rewrite, one small record in the log
        assert store.flush_sync() and (disk / "conv-c1.log").stat().st_size < 4096
        filler = fill(disk)
        kept = store.append(events[6])
        assert store.flush_sync(timeout=None), "the record fit: it is on disk"
        health = store.health()
        assert health.saving_fails is not None and "the disk is full" in health.saving_fails
        assert health.unsaved == 0
        filler.unlink()
        wait_until_blocking(lambda: store.health().ok, timeout=5, what="room again")
        assert store.close() == 0
        reopened = Store.open(disk, read_only=True)
        assert list(reopened.events("c1")) == [*first, kept]


def test_a_read_only_data_folder_is_reported_at_start_up_and_close_gives_up_in_bounded_time(tmp_path: Path) -> None:
    def prepare(folder: Path) -> list:
        store = Store.open(folder)
        written = [store.append(e) for e in conversation_events("c1", answers=1, chunks=3)]
        store.close()
        return written

    with read_only_folder(tmp_path / "ro", prepare) as (folder, written):
        store = Store.open(folder, flush_interval=0.02)
        health = store.health()
        assert health.saving_fails is not None and "read-only" in health.saving_fails
        assert [p.kind for p in health.problems] == ["saving"]
        assert list(store.events("c1")) == written, "everything saved before is shown"
        kept = store.append(Renamed(conversation_id="c1", ts="", title="only in memory"))
        assert store.events("c1")[-1] == kept
        assert store.close(timeout=0.5) == 1, "close says how many events could not be saved"
        wait_until_blocking(lambda: not store.writer.running, what="the writer giving up at close's deadline")


async def test_send_is_refused_with_the_reason_while_saving_fails_and_accepted_once_it_works_again(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    with small_disk(tmp_path / "disk", 256) as disk:
        engine = engines(disk)
        cid = engine.create_conversation()
        upstream.plan(Behavior(text="first answer"), Behavior(text="second answer"))
        await engine.submit(cid, "one")
        await wait_until(lambda: not engine.is_streaming(cid), what="the first answer")
        assert await engine.flush()
        filler = fill(disk)
        engine.rename(cid, "renamed while the disk is full")
        await wait_until(lambda: not engine.health().ok, timeout=2, what="the failed write")
        with pytest.raises(InputRejected, match=r"Saving fails: the disk is full .*your text stays in the box"):
            await engine.submit(cid, "two")
        with pytest.raises(InputRejected, match="Saving fails"):
            engine.create_conversation()
        assert len(upstream.records) == 1, "nothing was sent to the model"
        filler.unlink()
        await wait_until(lambda: engine.health().ok, timeout=5, what="saving works again")
        await engine.submit(cid, "two")
        await wait_until(lambda: not engine.is_streaming(cid), what="the second answer")
        assert await engine.flush()
        conv = engine.conversation(cid)
        assert conv is not None and conv.title == "renamed while the disk is full"
        await engine.shutdown()
        assert engine.store.close() == 0


def test_a_shutdown_with_a_full_disk_saves_what_waits_in_the_reserve(tmp_path: Path) -> None:
    """Issue 42: a shutdown while the disk was full dropped what waited in memory (31 events of one answer)."""
    with small_disk(tmp_path / "disk", 1024) as disk:
        store = Store.open(disk, flush_interval=0.02, reserve_bytes=256 * 1024, spill_dir=tmp_path / "spill")
        assert (disk / RESERVE_NAME).exists()
        first = [store.append(e) for e in conversation_events("c1", answers=1, chunks=5)]
        assert store.flush_sync()
        fill(disk)
        shown = [store.append(e) for e in conversation_events("c1", answers=1, chunks=200)[1:]]
        assert not store.flush_sync(timeout=None) and store.health().unsaved == len(shown)
        assert store.close() == 0, "everything the page showed is saved at shutdown"
        assert not (disk / RESERVE_NAME).exists() and not store.spill_path.exists()
        reopened = Store.open(disk, read_only=True)
        assert list(reopened.events("c1")) == first + shown


def test_when_even_the_reserve_is_not_enough_a_shutdown_spills_and_the_next_start_takes_it_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    spill_dir = tmp_path / "spill"
    with small_disk(tmp_path / "disk", 512) as disk:
        store = Store.open(disk, flush_interval=0.02, reserve_bytes=0, spill_dir=spill_dir)
        first = [store.append(e) for e in conversation_events("c1", answers=1, chunks=5)]
        assert store.flush_sync()
        filler = fill(disk)
        shown = [store.append(e) for e in conversation_events("c1", answers=1, chunks=200)[1:]]
        assert not store.flush_sync(timeout=None)
        assert store.close(timeout=1.0) == 0, "spilled: saved, though not in the data folder"
        assert store.spill_path.exists() and any("taken back at the next start" in m for m in caplog.messages)
        filler.unlink()
        again = Store.open(disk, flush_interval=0.02, reserve_bytes=0, spill_dir=spill_dir)
        assert list(again.events("c1")) == first + shown
        assert not again.spill_path.exists(), "the spill file is removed once its events are saved"
        assert again.close() == 0
        assert list(Store.open(disk, read_only=True).events("c1")) == first + shown
