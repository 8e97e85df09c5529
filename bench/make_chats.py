"""A data folder with many conversations, written through the real ``Store`` API (so its files are the product's).

    .venv/bin/python -m bench.make_chats [--conversations 10000] [--turns 20] [--long 5] [--long-turns 200]

Each conversation has ``turns`` turns of a short realistic question and an answer of 10-20 chunks (complete and
persisted, as a real turn ends; built by the tests' builder, ``tests.support.ledger_builders.turn_events``);
``long`` of them have ``long_turns`` turns instead. Titles are drawn from a small vocabulary, so a title search
finds some, not all. Times spread over the last year (the list has an order).

The folder is cached under /tmp, keyed by the arguments (and ``FORMAT``, bumped when the store's files change):
a second call with the same arguments returns at once. ``chats_dir`` gives the cached folder (benches that open it
read-write must not run at the same time: the folder is locked while open); ``fresh_copy`` a private copy of it.
Prints how long making it took.
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ledger.events.core import AnyEvent, Created
from store.tinydb.store import Store
from tests.support.ledger_builders import Pace, stamp, turn_events

FORMAT = 3  # bump when the store's files change, so that a cached folder is made again
T0 = datetime(2025, 12, 1, tzinfo=UTC)
#: A turn answers 300 ms after its question, a chunk every 40 ms (the request is sent at once).
PACE = Pace(request_ms=0, first_chunk_ms=300, chunk_ms=40)
TOPICS = (
    "postgres",
    "vacuum",
    "kubernetes",
    "ingress",
    "python",
    "asyncio",
    "litellm",
    "retry",
    "budget",
    "invoice",
    "recipe",
    "sourdough",
    "travel",
    "lisbon",
    "garden",
    "tomatoes",
    "resume",
    "interview",
    "rust",
    "lifetimes",
    "nicegui",
    "websocket",
    "tax",
    "mortgage",
)
WORDS = tuple(
    " ".join(
        (
            "the quick answer is that you should first check the configuration and then restart the service",
            "because most problems come from a stale cache or a wrong path in the settings file which is easy",
            "to fix once you know where it lives and how the loader reads it at start-up",
        )
    ).split(" ")
)


def chats_dir(conversations: int = 10_000, turns: int = 20, long: int = 5, long_turns: int = 200) -> Path:
    """The cached data folder for these arguments, made first if it is not there yet."""
    path = Path(tempfile.gettempdir()) / f"ledger-chats-v{FORMAT}-{conversations}x{turns}-{long}x{long_turns}"
    if not (path / "index.json").exists():
        make(path, conversations, turns, long, long_turns)
    return path


def fresh_copy(conversations: int = 10_000, turns: int = 20, long: int = 5, long_turns: int = 200) -> Path:
    """A private copy of the cached folder (the caller removes it): for benches that write or run in parallel."""
    source = chats_dir(conversations, turns, long, long_turns)
    target = Path(tempfile.mkdtemp(prefix="ledger-chats-copy-"))
    shutil.copytree(source, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("store.tinydb.lock"))
    return target


def long_ids(long: int) -> list[str]:
    """The ids of the long conversations ``make`` writes (for benches that open one)."""
    return [f"long{n:03d}" for n in range(long)]


def make(path: Path, conversations: int, turns: int, long: int, long_turns: int) -> None:
    """Write the folder next to ``path`` and move it in place when complete (a cache never holds half a folder)."""
    started = time.perf_counter()
    rng = random.Random(f"{conversations}x{turns}-{long}x{long_turns}")
    work = Path(tempfile.mkdtemp(prefix=path.name + ".making-", dir=path.parent))
    store = Store.open(work, flush_interval=1.0)
    events = 0
    plan = [(f"c{n:06d}", turns) for n in range(conversations - long)] + [(cid, long_turns) for cid in long_ids(long)]
    for number, (cid, count) in enumerate(plan, start=1):
        for event in conversation(rng, cid, count):
            store.append(event)
            events += 1
        if number % 250 == 0 or number == len(plan):
            assert store.flush_sync(timeout=600), "a write failed: the folder would not be what was asked"
            forget = getattr(store, "forget_saved", None)  # a lazy store can drop what is on disk from memory
            if forget is not None:
                forget()
    unsaved = store.close(timeout=600)
    assert unsaved == 0, f"{unsaved} event(s) could not be saved"
    shutil.rmtree(path, ignore_errors=True)
    work.rename(path)
    took = time.perf_counter() - started
    print(f"made {path}: {len(plan):,} conversations, {events:,} events in {took:.1f} s")


def conversation(rng: random.Random, cid: str, turns: int) -> list[AnyEvent]:
    """A created event and ``turns`` complete turns, at realistic times."""
    start = T0 + timedelta(minutes=rng.randrange(0, 365 * 24 * 60))
    title = " ".join(rng.sample(TOPICS, 2)) + f" {cid}"
    out: list[AnyEvent] = [Created(conversation_id=cid, ts=stamp(start), title=title)]
    at = start
    for turn in range(1, turns + 1):
        at += timedelta(seconds=rng.randrange(20, 600))
        out += _turn(rng, cid, turn, at)
    return out


def _turn(rng: random.Random, cid: str, turn: int, at: datetime) -> list[AnyEvent]:
    question = f"How do I handle {rng.choice(TOPICS)} with {rng.choice(TOPICS)}? (question {turn})"
    chunks = [" ".join(rng.choices(WORDS, k=rng.randrange(2, 5))) + " " for _ in range(rng.randrange(10, 21))]
    return turn_events(cid, turn, chunks, at=at, question=question, pace=PACE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--long", type=int, default=5, help="how many conversations have --long-turns turns")
    parser.add_argument("--long-turns", type=int, default=200)
    args = parser.parse_args()
    started = time.perf_counter()
    path = chats_dir(args.conversations, args.turns, args.long, args.long_turns)
    print(f"{path} ready in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
