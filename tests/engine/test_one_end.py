"""One way in, one way out: a Stop, a first-chunk timeout and an idle timeout all enter the attempt owner's one
cancel entry (``AttemptWorker.cancel``), and exactly one place in the engine ends an attempt."""

from __future__ import annotations

import ast
import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.commands.engine import Engine
from engine.offline import ready
from engine.provider.calls import ProviderConfig
from engine.provider.failures import StreamStalled
from engine.turns.attempt import AttemptRun
from engine.turns.settings import Limits
from engine.turns.streaming import Watchdog
from engine.turns.worker import AttemptWorker
from ledger.events.core import Cancelled, CancelRequested, Done, Failed, Persisted, StaleChunk, Started
from tests.support.engine import EngineFactory, current_attempt, one_end_each
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import nothing_more_for, wait_until

ROOT = Path(__file__).resolve().parents[2]
WORDS = " ".join(f"w{n}" for n in range(200))
ENDS = {"Cancelled", "Done", "Recovered", "Persisted", "Failed"}


@pytest.fixture
def entries(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    """Every call of the one cancel entry: (source, whether it cancelled)."""
    calls: list[tuple[str, bool]] = []
    entry = AttemptWorker.cancel

    async def recorded(self: AttemptWorker, source: Any, *args: Any, **kwargs: Any) -> bool:
        cancelled = await entry(self, source, *args, **kwargs)
        calls.append((source, cancelled))
        return cancelled

    monkeypatch.setattr(AttemptWorker, "cancel", recorded)
    return calls


def the_end(engine: Engine, cid: str) -> list[tuple[str, str | None]]:
    """The attempt's events from its cancel on: (kind, cancel source)."""
    kinds = [(e.KIND, getattr(e, "source", None)) for e in engine.events(cid)]
    cancel = next((n for n, (kind, _) in enumerate(kinds) if kind == "cancel_requested"), len(kinds))
    return kinds[cancel:]


async def timed_out_in(engine: Engine, upstream: ScriptedUpstream, behavior: Behavior) -> str:
    """A conversation whose one answer, answered with ``behavior``, ended by itself (here: by a timeout)."""
    upstream.reset()
    upstream.plan(behavior)
    cid = engine.create_conversation()
    await engine.submit(cid, "hello")
    await wait_until(lambda: not engine.streaming_here(), what="the answer ending")
    return cid


async def test_a_stop_a_first_chunk_timeout_and_an_idle_timeout_all_enter_the_owners_one_cancel_entry(
    engines: EngineFactory, upstream: ScriptedUpstream, entries: list[tuple[str, bool]], tmp_path: Path
) -> None:
    await ready()  # litellm's import is done (it takes seconds): only the clocks under test run
    stop = engines(tmp_path / "stop")
    first, idle = engines(tmp_path / "first", first_chunk_timeout=1.0), engines(tmp_path / "idle", idle_timeout=0.5)
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.02))
    cid = stop.create_conversation()
    _, answer = await stop.submit(cid, "count")
    await wait_until(lambda: current_attempt(stop, cid, answer).chunks_rendered >= 3, what="the answer streaming")
    assert await stop.cancel(cid, "user")
    late, stalled = Behavior(text="TOO LATE " * 20, first_delay=4.0), Behavior(text="PARTIAL " * 50, stall_after=4)
    timed_out = {
        "the first chunk": (first, await timed_out_in(first, upstream, late)),
        "the next chunk": (idle, await timed_out_in(idle, upstream, stalled)),
    }

    # the cancel entry returns after the attempt's end, a moment after the engine stops streaming: wait for it
    await wait_until(lambda: len(entries) == 3, what="every cancel entry to return")
    assert entries == [("user", True), ("timeout", True), ("timeout", True)]
    assert the_end(stop, cid) == [("cancel_requested", "user"), ("upstream_closed", None), ("cancelled", "user"),
                                  ("persisted", None)]  # fmt: skip
    for waited_for, (engine, tid) in timed_out.items():
        assert the_end(engine, tid) == [
            ("cancel_requested", "timeout"), ("upstream_closed", None), ("failed", None), ("persisted", None)
        ]  # fmt: skip
        (cancel,) = [e for e in engine.events(tid) if isinstance(e, CancelRequested)]
        assert cancel.keep_partial and cancel.turn == 1 and cancel.requested_by is None
        failed = [e for e in engine.events(tid) if isinstance(e, Failed)][-1]
        assert failed.error_type == "timeout" and failed.retryable and waited_for in failed.summary
        attempt = engine.conversation(tid).attempts[failed.attempt_id]
        assert attempt.status == "failed" and attempt.error_type == "timeout" and not attempt.in_history
    assert [(a.status, a.cancel_source) for a in stop.conversation(cid).attempts.values()] == [("interrupted", "user")]


async def test_a_timeout_that_rings_after_its_request_ended_changes_nothing(
    engines: EngineFactory, upstream: ScriptedUpstream, entries: list[tuple[str, bool]]
) -> None:
    await ready()
    engine = engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.01))
    _, answer = await engine.submit(cid, "count")
    await wait_until(lambda: current_attempt(engine, cid, answer).chunks_rendered >= 2, what="the answer streaming")
    run = engine.active_run(cid)
    assert run is not None
    run.time_out(StreamStalled(0.5, first=False), lambda: False)  # its request ended before the cancel began
    await wait_until(lambda: entries, what="the timeout reaching the cancel entry")
    await wait_until(lambda: not engine.is_streaming(cid), what="the answer ending")
    assert entries == [("timeout", False)]
    assert (
        current_attempt(engine, cid, answer).status == "complete" and current_attempt(engine, cid, answer).text == WORDS
    )
    assert "cancel_requested" not in [e.KIND for e in engine.events(cid)]


async def test_the_watchdog_rings_once_for_its_request_and_is_too_late_once_the_request_ended() -> None:
    rung: list[tuple[str, Callable[[], bool]]] = []
    run = AttemptRun(
        conversation_id="c", turn=1, message_id="m", user_message_id="u", attempt_id="a", model="x", messages=[],
        context_ids=(), provider=ProviderConfig(model="x"), append=lambda e: e, view=lambda: None,
        time_out=lambda stalled, still: rung.append((str(stalled), still)),
    )  # fmt: skip
    limits = Limits(first_chunk_timeout=0.05, idle_timeout=0.05)
    first = Watchdog(run, limits)
    await wait_until(lambda: rung, what="the first-chunk alarm")
    ((words, still),) = rung
    assert "0.05 s for the first chunk" in words and still()
    first.stop()
    assert not still(), "a ring acted on after its request ended is too late"
    fed = Watchdog(run, limits)
    fed.fed(asyncio.get_running_loop().time())
    await wait_until(lambda: len(rung) == 2, what="the idle alarm")
    assert "0.05 s for the next chunk" in rung[1][0]
    fed.stop()
    quiet = Watchdog(run, limits)
    quiet.stop()
    await nothing_more_for(0.3)
    assert len(rung) == 2, "a stopped watchdog never rings"


def test_the_ledger_check_sees_an_attempt_ended_twice_or_written_after_its_end() -> None:
    ids = {"conversation_id": "c", "attempt_id": "a"}
    started = Started(**ids, message_id="m", user_message_id="u", turn=1, model="x")
    persisted = Persisted(**ids, message_id="m", status="interrupted", text="")
    cancelled = Cancelled(**ids, source="user", delivered_chars=0, chunk_count=0)
    done = Done(**ids, request_id="r")
    stale = StaleChunk(**ids, request_id="r", chunk_seq=9, why="closed", chars=1)
    assert one_end_each([started, cancelled, persisted, stale]) == []
    assert one_end_each([started, cancelled, done, persisted])
    assert one_end_each([started, cancelled, persisted, done])
    assert one_end_each([started])
    assert one_end_each([started, Failed(**ids, error_type="server", summary="x", will_retry=True), persisted])


def calls(path: Path) -> Iterator[tuple[str, ast.Call]]:
    """Every call in the module, with the qualified name of the function it is written in."""

    def visit(node: ast.AST, where: str) -> Iterator[tuple[str, ast.Call]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                yield from visit(child, f"{where}.{child.name}".lstrip("."))
            else:
                if isinstance(child, ast.Call):
                    yield where, child
                yield from visit(child, where)

    yield from visit(ast.parse(path.read_text()), "")


def called(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def test_only_the_attempt_owner_ends_an_attempt_and_records_a_cancel() -> None:
    ends, cancels, finalizes, ending = [], [], [], []
    for path in sorted((ROOT / "engine").rglob("*.py")):
        module = path.relative_to(ROOT).as_posix()
        for where, call in calls(path):
            name = called(call)
            retried = any(k.arg == "will_retry" and getattr(k.value, "value", False) for k in call.keywords)
            if (
                name in ENDS and not retried and module != "engine/commands/branching.py"
            ):  # branching: copies for a new chat
                ends.append((module, where.split(".")[0]))
            cancels += [(module, where)] if name == "CancelRequested" else []
            finalizes += [(module, where)] if name == "finalize" else []
            ending += [(module, where)] if name == "_end" else []
    assert set(ends) == {("engine/turns/worker.py", "finalize"), ("engine/turns/worker.py", "recover")}
    assert finalizes == [("engine/turns/worker.py", "AttemptWorker._end")]
    assert sorted(ending) == [
        ("engine/turns/worker.py", "AttemptWorker._cancel"),
        ("engine/turns/worker.py", "AttemptWorker._life"),
    ]
    assert cancels == [("engine/turns/worker.py", "AttemptWorker._decided")]
