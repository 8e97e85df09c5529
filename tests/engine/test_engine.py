"""The engine against a real SSE upstream through litellm, with real TinyDB files: cancel, re-sends, chunk gate."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from engine.commands.engine import Engine, InputRejected
from ledger.codec import to_dict
from ledger.events.core import Chunk, Deleted
from ledger.folds.audit import audit
from tests.support.engine import EngineFactory, current_attempt
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import nothing_more_for, wait_until

WORDS = " ".join(f"w{n}" for n in range(200))


def kinds(engine: Engine, cid: str) -> list[str]:
    return [e.KIND for e in engine.store.events(cid)]


async def finished(engine: Engine, cid: str) -> None:
    await wait_until(lambda: not engine.is_streaming(cid))


async def test_stop_mid_stream_keeps_the_rendered_prefix_and_sends_it_next_turn(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.02))
    _, m1 = await engine.submit(cid, "count for me")
    await wait_until(lambda: current_attempt(engine, cid, m1).chunks_rendered >= 5)
    assert await engine.cancel(cid, "user")
    attempt = current_attempt(engine, cid, m1)
    record = upstream.records[-1]
    await wait_until(lambda: record.disconnected_at is not None, timeout=2)
    sent_at_stop = record.chunks_sent
    await nothing_more_for(0.3)
    assert record.chunks_sent == sent_at_stop and not record.finished, "upstream kept sending after Stop"
    assert attempt.status == "interrupted" and attempt.text and WORDS.startswith(attempt.text)
    persisted = [e for e in engine.store.events(cid) if e.KIND == "persisted"][-1]
    assert persisted.text == attempt.text and persisted.status == "interrupted"
    assert persisted.metrics.estimated and persisted.metrics.output_tokens > 0
    assert "upstream_closed" in kinds(engine, cid)

    _, m2 = await engine.submit(cid, "expand on point 2")
    await finished(engine, cid)
    sent = upstream.records[-1].messages
    assert sent == [
        {"role": "user", "content": "count for me"},
        {"role": "assistant", "content": attempt.text},
        {"role": "user", "content": "expand on point 2"},
    ]


async def test_stop_before_the_first_chunk_leaves_an_empty_attempt_and_no_history(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="GHOST TEXT " * 20, first_delay=2.0))
    _, m1 = await engine.submit(cid, "hello")
    await wait_until(lambda: len(upstream.records) == 1)
    assert await engine.cancel(cid, "user")
    attempt = current_attempt(engine, cid, m1)
    assert (attempt.status, attempt.text, attempt.chunks_received) == ("empty", "", 0)
    await engine.submit(cid, "second")
    await finished(engine, cid)
    assert [m["role"] for m in upstream.records[-1].messages] == ["user", "user"]
    assert all("GHOST" not in m["content"] for m in upstream.records[-1].messages)
    await wait_until(lambda: upstream.records[0].disconnected_at is not None, timeout=3)
    assert upstream.records[0].chunks_sent == 0


async def test_retry_right_after_stop_renders_only_the_new_attempt_and_counts_stale_chunks(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="OLD " * 100, chunk_delay=0.01), Behavior(text="NEW " * 30, chunk_delay=0.005))
    _, m1 = await engine.submit(cid, "hi")
    await wait_until(lambda: current_attempt(engine, cid, m1).chunks_rendered >= 3)
    await engine.cancel(cid, "user")
    new_attempt_id = await engine.retry(cid, m1)
    await finished(engine, cid)
    conv = engine.conversation(cid)
    assert conv is not None
    old_id, new_id = conv.messages[m1].attempt_ids
    assert new_attempt_id == new_id and conv.messages[m1].selected_attempt_id == new_id
    assert conv.attempts[new_id].text == "NEW " * 30
    assert "OLD" not in conv.attempts[new_id].text
    old = conv.attempts[old_id]
    assert old.status == "interrupted" and old.text.startswith("OLD")
    assert old.chunks_received == old.chunks_rendered + old.stale_chunks
    stale_events = [e for e in engine.store.events(cid) if e.KIND == "stale_chunk" and e.attempt_id == old_id]
    assert old.stale_chunks == len(stale_events)
    await wait_until(lambda: upstream.records[0].disconnected_at is not None, timeout=2)
    assert not upstream.records[0].finished


async def test_a_late_chunk_from_the_old_request_after_retry_is_recorded_stale_never_rendered(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="OLD " * 100, chunk_delay=0.01), Behavior(text="NEW " * 20, chunk_delay=0.02))
    _, m1 = await engine.submit(cid, "hi")
    await wait_until(lambda: current_attempt(engine, cid, m1).chunks_rendered >= 3)
    old_active = engine.active_run(cid)
    await engine.cancel(cid, "user")
    await engine.retry(cid, m1)
    await wait_until(lambda: current_attempt(engine, cid, m1).chunks_rendered >= 2)
    # The old request's stream answers late: its chunk reaches the engine's one chunk gate.
    assert old_active is not None
    assert old_active is not None
    rendered = old_active.receive("LATE OLD TOKEN", "text")
    await finished(engine, cid)
    assert rendered is False
    conv = engine.conversation(cid)
    assert conv is not None
    assert all("LATE" not in a.text for a in conv.attempts.values())
    stale = [e for e in engine.store.events(cid) if e.KIND == "stale_chunk"]
    assert len(stale) == 1 and stale[0].attempt_id == old_active.attempt_id and stale[0].why == "superseded"
    old_audit = next(a for a in audit(engine.store.events(cid)) if a.attempt_id == old_active.attempt_id)
    assert old_audit.stale_chunks == 1
    assert conv.attempts[old_active.attempt_id].stale_chunks == 1


async def test_each_provider_failure_ends_with_its_error_type_and_stays_out_of_history(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines(idle_timeout=0.5)
    cases = [
        ("drop", Behavior(text="PARTIALDROP " * 50, drop_after=5), "connection", None, 1),
        ("500", Behavior(status=500), "server", 500, 3),
        ("401", Behavior(status=401), "auth", 401, 1),
        ("malformed", Behavior(text="PARTIALBAD " * 50, malformed_after=4), "malformed_stream", None, 1),
        ("stall", Behavior(text="PARTIALSTALL " * 50, stall_after=4), "timeout", None, 1),
    ]
    for name, behavior, error_type, status, requests in cases:
        cid = engine.create_conversation()
        upstream.reset()
        upstream.plan(*([behavior] * requests))
        _, m1 = await engine.submit(cid, f"case {name}")
        await finished(engine, cid)
        attempt = current_attempt(engine, cid, m1)
        assert attempt.status == "failed", name
        assert attempt.error_type == error_type, name
        assert attempt.http_status == status, name
        summary = attempt.error_summary or ""
        assert summary and "\n" not in summary and "Traceback" not in summary and len(summary) <= 300, summary
        assert "sk-test-not-a-real-key" not in json.dumps([to_dict(e) for e in engine.store.events(cid)])
        assert len(upstream.records) == requests, f"{name}: {len(upstream.records)} requests"
        upstream.plan(Behavior(text="fine"))
        await engine.submit(cid, "next")
        await finished(engine, cid)
        later = json.dumps(upstream.records[-1].messages)
        assert "PARTIAL" not in later, f"{name}: failed text leaked into the next request"


async def test_rate_limit_before_the_first_chunk_is_resent_once_within_the_same_attempt(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(status=429), Behavior(text="after the retry"))
    _, m1 = await engine.submit(cid, "hi")
    await finished(engine, cid)
    attempt = current_attempt(engine, cid, m1)
    assert attempt.status == "complete" and attempt.text == "after the retry"
    assert len(attempt.request_ids) == 2 and len(upstream.records) == 2
    events = engine.store.events(cid)
    failed = [e for e in events if e.KIND == "failed"]
    assert len(failed) == 1 and failed[0].error_type == "rate_limit" and failed[0].will_retry
    (retrying,) = [e for e in events if e.KIND == "retrying"]
    assert retrying.why == "auto" and retrying.previous_request_id == attempt.request_ids[0]
    assert retrying.request_id == attempt.request_ids[1]


async def test_a_drop_after_text_was_delivered_is_never_resent(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="some words " * 20, drop_after=3), Behavior(text="SHOULD NOT BE ASKED"))
    _, m1 = await engine.submit(cid, "hi")
    await finished(engine, cid)
    assert current_attempt(engine, cid, m1).status == "failed"
    assert len(upstream.records) == 1


async def test_a_cancel_for_an_older_turn_changes_nothing(engines: EngineFactory, upstream: ScriptedUpstream) -> None:
    engine = engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="short"), Behavior(text=WORDS, chunk_delay=0.02))
    _, m1 = await engine.submit(cid, "one")
    await finished(engine, cid)
    _, m2 = await engine.submit(cid, "two")
    await wait_until(lambda: current_attempt(engine, cid, m2).chunks_rendered >= 2)
    before = kinds(engine, cid)
    assert await engine.cancel(cid, "user", turn=1) is False
    assert kinds(engine, cid)[: len(before)] == before and "cancel_requested" not in kinds(engine, cid)
    await finished(engine, cid)
    assert current_attempt(engine, cid, m2).status == "complete"


async def test_delete_during_a_stream_closes_upstream_and_writes_nothing_after_deleted(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    engine = engines()
    cid = engine.create_conversation()
    seen: list[str] = []
    engine.subscribe(lambda e: seen.append(e.KIND) if e.conversation_id == cid else None)
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.02))
    _, m1 = await engine.submit(cid, "hi")
    await wait_until(lambda: current_attempt(engine, cid, m1).chunks_rendered >= 3)
    await engine.delete(cid)
    await wait_until(lambda: upstream.records[-1].disconnected_at is not None, timeout=2)
    await nothing_more_for(0.3)
    assert seen[-1] == "deleted" and seen.count("deleted") == 1
    assert "cancel_requested" in seen and "upstream_closed" in seen
    assert engine.conversation(cid) is None
    await engine.store.flush()
    assert not (tmp_path / "data" / f"conv-{cid}.json").exists()
    assert not upstream.records[-1].finished


async def test_twenty_conversations_streaming_at_once_all_finish_with_correct_accounting(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cids = [engine.create_conversation() for _ in range(20)]
    upstream.plan(*[Behavior(text=f"answer {n} " + "x " * 60, chunk_delay=0.005) for n in range(20)])
    messages = await asyncio.gather(*(engine.submit(cid, f"question {n}") for n, cid in enumerate(cids)))
    await wait_until(lambda: not any(engine.is_streaming(c) for c in cids), timeout=30)
    for cid, (_, m) in zip(cids, messages, strict=True):
        attempt = current_attempt(engine, cid, m)
        chunks = [e for e in engine.store.events(cid) if isinstance(e, Chunk)]
        assert attempt.status == "complete"
        assert attempt.chunks_received == attempt.chunks_rendered + attempt.stale_chunks == len(chunks) == 62
        assert attempt.text == "".join(c.text for c in chunks)


async def test_engine_state_after_restart_equals_the_live_state(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    engine = engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="a b c d e f"), Behavior(text=WORDS, chunk_delay=0.02))
    await engine.submit(cid, "one")
    await finished(engine, cid)
    _, m2 = await engine.submit(cid, "two")
    await wait_until(lambda: current_attempt(engine, cid, m2).chunks_rendered >= 3)
    await engine.cancel(cid, "user")
    live = engine.conversation(cid)
    engine.store.close()
    again = engines(tmp_path / "data")
    assert again.conversation(cid) == live
    assert not any(e.KIND == "deleted" for e in again.store.events(cid))
    assert isinstance(again.store.events(cid)[-1], type(engine.store.events(cid)[-1]))
    assert not isinstance(again.store.events(cid)[-1], Deleted)


async def test_with_the_continue_policy_the_last_viewer_leaving_is_recorded_and_the_stream_goes_on(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.005))
    await engine.viewer_joined(cid, "tab-1")
    await engine.viewer_joined(cid, "tab-2")
    _, m1 = await engine.submit(cid, "hi")
    await engine.viewer_left(cid, "tab-1", "navigation")
    assert "detached" not in kinds(engine, cid), "only the last viewer leaving counts"
    await engine.viewer_left(cid, "tab-2", "disconnect")
    await engine.viewer_joined(cid, "tab-3")
    await finished(engine, cid)
    assert current_attempt(engine, cid, m1).status == "complete" and current_attempt(engine, cid, m1).text == WORDS
    assert [k for k in kinds(engine, cid) if k in ("detached", "attached")] == ["detached", "attached"]


async def test_with_the_cancel_policy_leaving_stops_through_the_cancel_path_keeping_the_partial(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines(leave_policy="cancel")
    cid = engine.create_conversation()
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.02))
    await engine.viewer_joined(cid, "tab-1")
    _, m1 = await engine.submit(cid, "hi")
    await wait_until(lambda: current_attempt(engine, cid, m1).chunks_rendered >= 3)
    await engine.viewer_left(cid, "tab-1", "navigation")
    attempt = current_attempt(engine, cid, m1)
    assert attempt.status == "interrupted" and attempt.cancel_source == "navigation" and attempt.in_history
    assert [e.source for e in engine.store.events(cid) if e.KIND == "cancel_requested"] == ["navigation"]


async def test_reasoning_is_kept_in_its_own_block_and_never_sent_back(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="the answer", reasoning="SECRET chain of thought"), Behavior(text="ok"))
    _, m1 = await engine.submit(cid, "think first")
    await finished(engine, cid)
    attempt = current_attempt(engine, cid, m1)
    assert (attempt.reasoning, attempt.text) == ("SECRET chain of thought", "the answer")
    await engine.submit(cid, "next")
    await finished(engine, cid)
    assert "SECRET" not in json.dumps(upstream.records[-1].messages)
    assert upstream.records[-1].messages[1] == {"role": "assistant", "content": "the answer"}


async def test_shutdown_stops_every_stream_keeping_partials_and_closing_upstreams(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cids = [engine.create_conversation() for _ in range(3)]
    upstream.plan(*[Behavior(text=WORDS, chunk_delay=0.02) for _ in cids])
    messages = [(await engine.submit(cid, "go"))[1] for cid in cids]
    await wait_until(
        lambda: all(current_attempt(engine, c, m).chunks_rendered >= 2 for c, m in zip(cids, messages, strict=True))
    )
    await engine.shutdown()
    for cid, m in zip(cids, messages, strict=True):
        attempt = current_attempt(engine, cid, m)
        assert attempt.status == "interrupted" and attempt.cancel_source == "shutdown" and attempt.in_history
        assert "upstream_closed" in kinds(engine, cid)
    await wait_until(lambda: all(r.disconnected_at is not None for r in upstream.records), timeout=3)


async def test_a_title_made_only_of_invisible_characters_needs_a_name(engines: EngineFactory) -> None:
    engine = engines()
    cid = engine.create_conversation()
    for invisible in ("\u200b\u200b", "\x00", "\u202e", " \ufeff\u200d "):
        with pytest.raises(InputRejected, match="needs a name"):
            engine.rename(cid, invisible)
    engine.rename(cid, "\u202eplain\u200b title\x00")
    conv = engine.conversation(cid)
    assert conv is not None and conv.title == "plain title"


async def test_a_stop_meant_for_an_attempt_never_stops_a_newer_retry_of_the_same_turn(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.02), Behavior(text=WORDS, chunk_delay=0.02))
    _, m1 = await engine.submit(cid, "count")
    await wait_until(lambda: current_attempt(engine, cid, m1).chunks_rendered >= 2)
    old = current_attempt(engine, cid, m1).attempt_id
    await engine.retry(cid, m1)  # another tab retried: same turn, new attempt
    await wait_until(lambda: current_attempt(engine, cid, m1).chunks_rendered >= 2)
    assert await engine.cancel(cid, "user", attempt_id=old) is False  # the Stop of a tab that still showed the old
    assert current_attempt(engine, cid, m1).status == "streaming"
    assert await engine.cancel(cid, "user", attempt_id=current_attempt(engine, cid, m1).attempt_id)
