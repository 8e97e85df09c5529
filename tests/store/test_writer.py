"""The one writer both stores use (``store.writer``), with a back end that records what it is given to write.

What is asserted is what was written, in which batches and order, and what ``health()`` says: the rules that
were kept in two copies before (the wake-up rule, the backoff, the bounded stop) hold once, here.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator

import pytest

from ledger.events.core import AnyEvent, Chunk, Done
from store.api import is_urgent
from store.health import ProblemLog, describe_os_error
from store.writer import Batch, Batches, Writer, Written
from tests.support.waiting import nothing_more_for_blocking, wait_until_blocking


class Recording(Batches):
    """Writes nothing: keeps each batch's seqs per conversation, and fails the first ``failures`` writes."""

    def __init__(self, failures: int = 0) -> None:
        self.batches: list[dict[str, list[int]]] = []
        self.failures = failures

    def write(self, batch: Batch) -> Written:
        if self.failures > 0:
            self.failures -= 1
            return 0, batch, OSError(28, "No space left on device")
        if batch:
            self.batches.append({cid: [e.seq for e in events] for cid, events in batch.items()})
        return sum(len(events) for events in batch.values()), {}, None

    def describe(self, error: BaseException) -> tuple[str, str]:
        return describe_os_error(error)

    def written_seqs(self) -> list[int]:
        return [seq for batch in self.batches for seqs in batch.values() for seq in seqs]


class Queue:
    def __init__(self, batches: Recording, flush_interval: float) -> None:
        self.lock = threading.Condition()
        self.writer = Writer(
            self.lock, batches, ProblemLog(logging.getLogger("test")), flush_interval=flush_interval, name="test"
        )
        self.writer.start()

    def add(self, event: AnyEvent) -> None:
        with self.lock:
            self.writer.queue(event.conversation_id, event, urgent=is_urgent(event))


@pytest.fixture
def writers() -> Iterator[list[Queue]]:
    made: list[Queue] = []
    yield made
    for queue in made:
        queue.writer.stop(timeout=1.0)


def chunk(seq: int, cid: str = "c1") -> Chunk:
    return Chunk(seq=seq, conversation_id=cid, attempt_id="a1", request_id="r1", chunk_seq=seq, text=f"w{seq} ")


def test_a_run_of_chunks_is_written_as_one_batch_once_the_flush_interval_passed(writers: list[Queue]) -> None:
    recording = Recording()
    writers.append(queue := Queue(recording, flush_interval=0.2))
    started = time.monotonic()
    for seq in range(1, 51):
        queue.add(chunk(seq))
    wait_until_blocking(lambda: recording.batches, what="the batch is written")
    # a lower bound only: a busy machine can make it later, never earlier
    assert time.monotonic() - started >= 0.2, "chunks alone wait for the interval"
    assert recording.batches == [{"c1": list(range(1, 51))}]
    assert queue.writer.health().ok and queue.writer.health().unsaved == 0


def test_an_event_that_ends_something_is_written_at_once_with_the_chunks_waiting_before_it(
    writers: list[Queue],
) -> None:
    recording = Recording()
    writers.append(queue := Queue(recording, flush_interval=30.0))
    for seq in range(1, 4):
        queue.add(chunk(seq))
    nothing_more_for_blocking(0.3)  # the writer woke for the first chunk and waits for the interval
    assert recording.batches == [], "chunks alone wait for the 30 s interval"
    queue.add(Done(seq=4, conversation_id="c1", attempt_id="a1", request_id="r1"))
    wait_until_blocking(lambda: recording.batches, timeout=5, what="the urgent event wakes the writer")
    assert recording.batches == [{"c1": [1, 2, 3, 4]}]


def test_a_failed_batch_is_retried_before_later_events_and_health_says_why_until_it_works(
    writers: list[Queue],
) -> None:
    recording = Recording(failures=2)
    writers.append(queue := Queue(recording, flush_interval=0.02))
    queue.add(Done(seq=1, conversation_id="c1", attempt_id="a1", request_id="r1"))
    assert not queue.writer.flush_sync(timeout=5), "a failed write is reported, not waited out"
    health = queue.writer.health()
    assert health.saving_fails is not None and "the disk is full" in health.saving_fails and health.unsaved == 1
    queue.add(chunk(2))
    wait_until_blocking(lambda: queue.writer.flush_sync(timeout=5), what="the retried write")
    assert recording.written_seqs() == [1, 2]
    assert queue.writer.health().ok and queue.writer.problems == []


def test_stopping_while_saving_fails_gives_up_in_bounded_time_and_counts_what_was_not_saved() -> None:
    recording = Recording(failures=10**6)
    queue = Queue(recording, flush_interval=0.02)
    for seq in range(1, 4):
        queue.add(chunk(seq))
    assert queue.writer.stop(timeout=0.3) == 3
    assert recording.batches == []
    # bounded: the thread ends by itself at stop's deadline though every write fails (not left retrying forever)
    wait_until_blocking(lambda: not queue.writer.running, what="the writer thread giving up")
