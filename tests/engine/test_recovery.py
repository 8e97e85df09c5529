"""A process killed mid-stream comes back with the answer interrupted at its persisted prefix (release scenario 8)."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ledger.events.core import Chunk
from tests.support.children import child_saying
from tests.support.engine import EngineFactory, current_attempt
from tests.support.upstream import Behavior, ScriptedUpstream

STORY = " ".join(f"word{n}" for n in range(400))


@contextmanager
def streaming_child(
    module: str, data: Path, upstream: ScriptedUpstream
) -> Iterator[tuple[subprocess.Popen[str], str, str]]:
    """``tests.support.<module>`` streaming an answer into ``data`` (the conversation and message it said); the
    child is killed on the way out if it still runs."""
    upstream.plan(Behavior(text=STORY, chunk_delay=0.01))
    with child_saying(module, [str(data), upstream.base_url], "STREAMING", 60) as (child, line):
        _, cid, message_id = line.split()
        yield child, cid, message_id


async def test_a_process_killed_mid_stream_comes_back_interrupted_with_its_persisted_prefix(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    data = tmp_path / "crash"
    with streaming_child("crash_child", data, upstream) as (child, cid, message_id):
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)

    engine = engines(data)
    stored_chunks = [e for e in engine.store.events(cid) if isinstance(e, Chunk)]
    assert len(stored_chunks) >= 20
    assert current_attempt(engine, cid, message_id).status == "streaming"
    recovered = engine.recover()
    attempt = current_attempt(engine, cid, message_id)
    assert recovered == [attempt.attempt_id]
    assert attempt.status == "interrupted" and attempt.cancel_source == "restart"
    assert attempt.text == "".join(c.text for c in stored_chunks) and STORY.startswith(attempt.text)
    kinds = [e.KIND for e in engine.store.events(cid)][-2:]
    assert kinds == ["recovered", "persisted"]
    assert engine.recover() == [], "recovery must happen once"


async def test_a_process_killed_between_a_stops_index_write_and_its_events_comes_back_interrupted(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    """Found by 16 kill -9 at random moments: one, at a Stop, left the answer streaming for good after the
    restart: the index said the attempt had ended, the conversation's file did not hold the end, and start-up
    recovery reads only the conversations the index marks open."""
    data = tmp_path / "torn"
    with streaming_child("crash_between_writes", data, upstream) as (child, cid, message_id):
        assert child.wait(timeout=30) == 137, "the child died between the two writes"

    engine = engines(data)
    recovered = engine.recover()  # as at start-up: before anything opens the conversation
    attempt = current_attempt(engine, cid, message_id)
    assert recovered == [attempt.attempt_id], "the index hid the open attempt from start-up recovery"
    kinds = [e.KIND for e in engine.store.events(cid)]
    # the Stop's end died with the kill (its request may have been saved in an earlier batch, on a busy machine)
    assert "cancelled" not in kinds and kinds[-2:] == ["recovered", "persisted"], kinds[-4:]
    stored_chunks = [e for e in engine.store.events(cid) if isinstance(e, Chunk)]
    assert attempt.status == "interrupted" and attempt.text == "".join(c.text for c in stored_chunks)
