"""Lazy history: start-up reads the index, a conversation is read when opened and dropped when nobody shows it;
the list, search, export and restart recovery still cover every conversation."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

from ledger.events.core import Chunk
from ledger.reducer import replay
from ledger.summary import summary_of
from store.tinydb.store import Store
from tests.support.engine import EngineFactory, current_attempt
from tests.support.ledger_builders import conversation_events
from tests.support.upstream import ScriptedUpstream
from ui.export import archive, archive_async


def write_folder(folder: Path, count: int = 6) -> dict[str, list]:
    store = Store.open(folder)
    written = {
        f"c{n}": [store.append(e) for e in conversation_events(f"c{n}", answers=3, chunks=4)] for n in range(count)
    }
    assert store.close() == 0
    return written


async def test_start_up_reads_no_conversation_and_opening_one_gives_the_state_of_a_full_replay(
    engines: EngineFactory, tmp_path: Path
) -> None:
    written = write_folder(tmp_path / "data")
    engine = engines(tmp_path / "data")
    assert not any(engine.is_loaded(cid) for cid in written)
    assert [s.conversation_id for s in engine.summaries("chat c3")] == ["c3"]
    conv = await engine.load("c3")
    assert conv == replay(written["c3"]).conversations["c3"]
    assert engine.is_loaded("c3") and not engine.is_loaded("c2")


async def test_a_conversation_nobody_shows_is_dropped_and_read_again_identical(
    engines: EngineFactory, tmp_path: Path
) -> None:
    written = write_folder(tmp_path / "data")
    engine = engines(tmp_path / "data")
    await engine.load("c1")
    await engine.viewer_joined("c1", "tab-1")
    await engine.viewer_left("c1", "tab-1")
    assert not engine.is_loaded("c1") and not engine.store.is_loaded("c1")
    engine.rename("c1", "renamed after a reload")
    assert engine.conversation("c1").title == "renamed after a reload"
    assert engine.conversation("c1") == replay(engine.store.events("c1")).conversations["c1"]
    assert engine.store.events("c1")[: len(written["c1"])] == tuple(written["c1"])


async def test_export_and_search_cover_conversations_that_are_not_loaded(
    engines: EngineFactory, tmp_path: Path
) -> None:
    written = write_folder(tmp_path / "data")
    engine = engines(tmp_path / "data")
    with zipfile.ZipFile(io.BytesIO(await archive_async(engine))) as zipped:
        names = sorted(zipped.namelist())
        lines = zipped.read(next(n for n in names if n.endswith("(c4).jsonl"))).decode().splitlines()
    chats = [n for n in names if n not in ("presets.json", "costs.json")]  # each "its title (its id)"
    assert sorted(chats) == sorted(n for cid in written for n in names if n.endswith((f"({cid}).jsonl", f"({cid}).md")))
    assert len(chats) == 2 * len(written) and {"presets.json", "costs.json"} <= set(names)  # every preset, its cost
    assert [json.loads(line)["seq"] for line in lines] == [e.seq for e in written["c4"]]
    assert archive(engine) and not any(engine.is_loaded(cid) for cid in written)
    hits = await engine.search_async("question 3")  # a line of a user message, in every conversation
    assert sorted(h.conversation_id for h in hits) == sorted(written) and {h.line for h in hits} == {"question 3"}
    assert [h.conversation_id for h in engine.search("chat c5")] == ["c5"]
    assert not any(engine.is_loaded(cid) for cid in written)


async def test_an_open_attempt_in_a_conversation_that_is_not_loaded_is_recovered_at_start_up(
    engines: EngineFactory, tmp_path: Path
) -> None:
    write_folder(tmp_path / "data")
    store = Store.open(tmp_path / "data")
    streaming = conversation_events("crashed", answers=1, chunks=5)[:-2]  # the process died mid-answer
    [store.append(e) for e in streaming]
    assert store.close() == 0
    engine = engines(tmp_path / "data")
    assert not engine.is_loaded("crashed")
    (recovered,) = engine.recover()
    attempt = current_attempt(engine, "crashed", "m1")
    assert recovered == attempt.attempt_id and attempt.status == "interrupted"
    assert attempt.text == "".join(e.text for e in streaming if isinstance(e, Chunk))
    assert not any(engine.is_loaded(f"c{n}") for n in range(6)), "only the conversation with an open attempt is read"


def test_an_index_written_before_summaries_is_upgraded_once_at_open(tmp_path: Path) -> None:
    written = write_folder(tmp_path)
    path = tmp_path / "index.json"
    old = json.loads(path.read_text())
    for doc in old["conversations"].values():
        for key in ("title", "created", "updated", "open", "last_seq"):
            doc.pop(key, None)
    path.write_text(json.dumps(old))
    store = Store.open(tmp_path)
    expected = {cid: replay(events).conversations[cid].title for cid, events in written.items()}
    assert {s.conversation_id: s.title for s in store.summaries()} == expected
    store.close()
    upgraded = json.loads(path.read_text())
    assert all("last_seq" in doc for doc in upgraded["conversations"].values())


async def test_a_long_answer_streams_into_an_engine_that_started_lazily(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    write_folder(tmp_path / "data", count=2)
    engine = engines(tmp_path / "data")
    await engine.viewer_joined("c0", "tab")
    from tests.support.upstream import Behavior
    from tests.support.waiting import wait_until

    upstream.plan(Behavior(text="many words " * 100))
    _, message_id = await engine.submit("c0", "go on")
    await wait_until(lambda: not engine.is_streaming("c0"), 30, "the answer ended")
    attempt = current_attempt(engine, "c0", message_id)
    assert attempt.status == "complete", (attempt.status, attempt.error_summary, attempt.chunks_received)
    assert engine.conversation("c0") == replay(engine.store.events("c0")).conversations["c0"]


def test_a_summary_the_index_got_wrong_is_corrected_when_its_conversation_is_read(tmp_path: Path) -> None:
    written = write_folder(tmp_path, count=2)
    path = tmp_path / "index.json"
    index = json.loads(path.read_text())
    for doc in index["conversations"].values():
        doc.update(title="stale", open=["a9"])  # as if a crash came between the index and the file of a batch
    path.write_text(json.dumps(index))
    store = Store.open(tmp_path)
    assert {s.title for s in store.summaries()} == {"stale"}
    store.events("c1")
    assert store.summary("c1") == summary_of(replay(written["c1"]).conversations["c1"])
    assert store.close() == 0
    reopened = Store.open(tmp_path)
    assert reopened.summary("c1").title == "chat c1" and reopened.summary("c0").title == "stale"
    reopened.close()
