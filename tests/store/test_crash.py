"""The TinyDB store killed (``kill -9``) at random moments while ten conversations stream into its append-only
files: after each restart every file opens, the seqs are gap-free, every attempt has one end once the engine's
recovery has run, and nothing the store had reported durable is missing."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from engine.commands.assembly import build_engine
from ledger.events.core import AnyEvent
from store.tinydb.store import Store
from tests.support.app_process import ROOT
from tests.support.engine import TERMINAL, make_settings
from tests.support.stream_child import CONVERSATIONS

KILLS = 20


def one_end(events: Iterable[AnyEvent]) -> list[str]:
    """The attempts without exactly one end (``cancelled``, ``done``, ``recovered`` or a final ``failed``). Whether
    its ``persisted`` follows is the engine's to write: a kill between an end and its ``persisted`` leaves the end
    alone (see ``tests.support.engine.one_end_each`` for the engine's own runs)."""
    ends: Counter[tuple[str, str]] = Counter()
    for event in events:
        attempt = getattr(event, "attempt_id", None)
        if attempt is not None and event.KIND in ("started", *TERMINAL) and not getattr(event, "will_retry", False):
            ends[(event.conversation_id, attempt)] += event.KIND != "started"
    return [f"{cid}/{attempt}: {n} ends" for (cid, attempt), n in ends.items() if n != 1]


def run_until_killed(folder: Path, rng: random.Random) -> dict[str, int]:
    """Start the streaming child, kill it at a random moment; the last seq per conversation it reported durable."""
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.support.stream_child", str(folder)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    lines: list[str] = []
    try:
        assert child.stdout.readline() == "READY\n"
        reader = threading.Thread(target=lambda: lines.extend(child.stdout), daemon=True)
        reader.start()
        try:
            child.wait(timeout=rng.uniform(0.05, 0.8))  # a random moment to kill it at (it never ends by itself)
        except subprocess.TimeoutExpired:
            child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=10) == -signal.SIGKILL
        reader.join(timeout=10)
    finally:
        child.kill()
    durable = {cid: 0 for cid in CONVERSATIONS}
    for line in lines:
        if line.startswith("DURABLE ") and line.endswith("\n"):  # a line cut by the kill says nothing
            durable.update({cid: int(seq) for cid, seq in (pair.split(":") for pair in line.split()[1:])})
    return durable


async def test_twenty_kills_while_ten_conversations_stream_lose_nothing_that_was_reported_durable(
    tmp_path: Path,
) -> None:
    folder, rng = tmp_path / "data", random.Random(39)
    known: dict[str, list[AnyEvent]] = {cid: [] for cid in CONVERSATIONS}
    for kill in range(KILLS):
        durable = run_until_killed(folder, rng)
        store = Store.open(folder)
        for cid in CONVERSATIONS:
            events = list(store.events(cid)) if cid in store.conversation_ids() else []
            seqs = [e.seq for e in events]
            assert seqs == list(range(1, len(events) + 1)), f"kill {kill}: {cid} has gaps"
            assert events[: len(known[cid])] == known[cid], f"kill {kill}: {cid} lost what an earlier run had"
            assert len(events) >= durable[cid], f"kill {kill}: {cid} lost events reported durable"
        damage = [p for p in store.problems if "its log is damaged" not in p or "cut back" not in p]
        assert damage == [], f"kill {kill}: only a torn last record may be cut back: {store.problems}"
        engine = build_engine(store, make_settings("http://127.0.0.1:9/v1"))
        engine.recover()  # as the app does at start-up: what a dead process left streaming ends as interrupted
        await engine.shutdown()
        assert store.close() == 0
        reopened = Store.open(folder, read_only=True)
        for cid in CONVERSATIONS:
            known[cid] = list(reopened.events(cid)) if cid in reopened.conversation_ids() else []
        assert one_end(e for events in known.values() for e in events) == [], f"kill {kill}"
    assert all(len(known[cid]) > 100 for cid in CONVERSATIONS), "every conversation streamed through the kills"
    assert any((folder / f"conv-{cid}.json").stat().st_size > 8 * 1024 for cid in CONVERSATIONS), "logs compacted"
