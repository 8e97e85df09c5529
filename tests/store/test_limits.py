"""Spend limits beside the accounts (``store.limits``): the same contract for memory, the JSON file beside the TinyDB
ledger and the PostgreSQL table on a real database; a reopened store (a restart) and a second store on the same
place (another instance) see the same limits at once, and a spend guard on each holds the other's change at its
next check; a person's record replaces everyone's default whole, and removing it falls back to the default."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from engine.spend import SpendGuard, UsageBook
from ledger.reducer import EMPTY_STATE
from store.limits import DEFAULT, FileLimits, LimitStore, MemoryLimits, SpendLimit
from store.tinydb.store import Store

Opener = Callable[[], LimitStore]
BEN = "local:ben"


@pytest.fixture(params=["memory", "file", "postgres"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens the back end again on the same place each time it is called (memory: the one store)."""
    if request.param == "memory":
        one = MemoryLimits()
        yield lambda: one
    elif request.param == "file":
        yield lambda: FileLimits(tmp_path / "spend_limits.json")
    else:
        from store.limits import PgLimits

        url = request.getfixturevalue("database_url")
        opened: list[PgLimits] = []

        def open_pg() -> LimitStore:
            opened.append(PgLimits.open(url, instance=f"test-{len(opened)}"))
            return opened[-1]

        yield open_pg
        for store in opened:
            store.close()


def test_a_limit_is_kept_replaced_whole_and_removed_and_every_opening_of_the_store_sees_the_same(
    opener: Opener,
) -> None:
    first, second = opener(), opener()  # a restart, or another instance on the same database
    for key in list(first.limits()):
        first.remove(key)
    first.put(DEFAULT, SpendLimit(day_usd=1.0, month_tokens=2_000_000))
    first.put(BEN, SpendLimit(day_usd=0.05, month_usd=2.5, day_tokens=20_000))
    assert second.limits() == {
        DEFAULT: SpendLimit(day_usd=1.0, month_tokens=2_000_000),
        BEN: SpendLimit(day_usd=0.05, month_usd=2.5, day_tokens=20_000),
    }
    second.put(BEN, SpendLimit(month_tokens=10))  # replaced whole: the other caps go
    assert first.limits()[BEN] == SpendLimit(month_tokens=10)
    second.put(BEN, SpendLimit())  # a person given no cap at all
    assert first.limits()[BEN].none
    assert first.remove(BEN) and not second.remove(BEN)
    assert opener().limits() == {DEFAULT: SpendLimit(day_usd=1.0, month_tokens=2_000_000)}


async def test_a_guard_on_each_instance_holds_the_others_change_at_its_next_check(
    opener: Opener, tmp_path: Path
) -> None:
    first, second = opener(), opener()
    for key in list(first.limits()):
        first.remove(key)
    ledger = Store.open(tmp_path / "ledger")  # nothing spent yet
    try:
        guards = [SpendGuard(UsageBook(ledger, lambda: EMPTY_STATE), store) for store in (first, second)]
        assert all(g.limit_of(BEN).none for g in guards), "no limit set: none applies"
        first.put(DEFAULT, SpendLimit(day_usd=0.5))
        assert [g.limit_of(BEN) for g in guards] == [SpendLimit(day_usd=0.5)] * 2
        assert [await g.over(BEN) for g in guards] == [None, None], "nothing spent: under $0.50"
        second.put(BEN, SpendLimit(day_tokens=0))  # ben may send nothing today
        refused = [await g.over(BEN) for g in guards]
        assert all(o is not None and o.sentence == refused[0].sentence for o in refused), "held on both at once"
        assert [await g.over("local:cat") for g in guards] == [None, None], "everyone else: the default"
    finally:
        ledger.close()
