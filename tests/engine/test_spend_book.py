"""The usage book (``engine.spend.book``) equals a full fold of the ledger whatever was asked before, and the usage
page's groupings (``engine.spend.report``) sum to the ledger: hypothesis properties over random sessions appended
through the real read side to a real TinyDB store, asked at random points, loaded and not, across a deletion (its
chat's spend stays) and a restart."""

from __future__ import annotations

import csv
import io
import tempfile
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.files import models
from engine.offline import litellm
from engine.provider import total
from engine.read import ReadSide
from engine.spend import ANYONE, UsageBook, by_day, by_person, csv_text, overall, priced
from ledger.codec import from_dict, to_dict
from ledger.events import Deleted
from ledger.reducer import replay
from ledger.usage import buried_rows, usage_of, usage_rows
from store.tinydb.store import Store
from tests.support.random_sessions import CONV, build_events
from tests.support.session_steps import steps

MODEL = "openai/spend-book-test"


def full_fold(store: Store) -> tuple:
    if store.summary(CONV) is None:
        return ()
    conv = replay(store.events(CONV, keep=False)).conversations.get(CONV)
    return usage_rows(conv) if conv is not None and not conv.deleted else ()


def fold_of(appended: list) -> tuple:
    """The rows of a full fold of every event appended (a deleted chat's: the rows it had, marked deleted)."""
    conv = replay(appended).conversations.get(CONV)
    return usage_rows(conv) if conv is not None else ()


@settings(max_examples=40, deadline=None)
@given(
    st.lists(steps, max_size=40),
    st.lists(st.tuples(st.integers(0, 200), st.booleans()), max_size=6),
    st.one_of(st.none(), st.integers(0, 40)),
)
def test_the_kept_fold_equals_a_full_fold_at_every_point_asked_and_across_a_deletion_and_a_restart(
    plan: list[tuple], asks: list[tuple], delete_at: int | None
) -> None:
    events = build_events(plan)
    points = {n: forget for n, forget in asks}
    with tempfile.TemporaryDirectory() as folder:
        store = Store.open(folder, flush_interval=0.01)
        try:
            read = ReadSide(store)
            book = UsageBook(store, lambda: read.state)
            appended = []
            for n, event in enumerate(events):
                if n == delete_at and (conv := read.conversation(CONV)) is not None:
                    appended.append(read.append(Deleted(conversation_id=CONV, ts="2026-01-01T00:01:00.000+00:00",
                                                        owner=conv.owner, usage=usage_of(conv))))  # fmt: skip
                    assert tuple(book.rows(ANYONE)) == fold_of(appended), "a deleted chat's spend stays"
                    break
                appended.append(read.append(replace(event, ts=event.ts or f"2026-01-01T00:00:{n % 60:02d}.000+00:00")))
                if n in points:
                    if points[n]:  # asked while the conversation is not in memory: read from the files
                        assert store.flush_sync()
                        read.forget(CONV)
                    assert tuple(book.rows(ANYONE)) == full_fold(store) == fold_of(appended)
                    assert tuple(book.rows(None)) == full_fold(store), "personal mode: the one person's rows"
            folds = book.folds
            assert tuple(book.rows(ANYONE)) == fold_of(appended)
            assert book.rows(ANYONE) == book.rows(ANYONE) and book.folds <= folds + 1, "asked again: no new fold"
        finally:
            store.close()
        store = Store.open(folder, flush_interval=0.01)
        try:
            read = ReadSide(store)
            assert tuple(UsageBook(store, lambda: read.state).rows(ANYONE)) == fold_of(appended), "after a restart"
        finally:
            store.close()


@settings(max_examples=150, deadline=None)
@given(st.lists(steps, max_size=60), st.lists(steps, max_size=30))
def test_usage_totals_by_day_model_status_and_person_equal_the_sum_over_the_ledger_deleted_chats_included(
    plan: list[tuple], deleted_plan: list[tuple]
) -> None:
    models.declare({MODEL: {"input_cost_per_token": 1e-6, "output_cost_per_token": 3e-6}})
    assert litellm() is not None
    conv = replay(build_events(plan)).conversations.get(CONV)
    gone = replay(build_events(deleted_plan)).conversations.get(CONV)
    kept = Deleted(conversation_id="gone", owner="local:ann", usage=usage_of(gone)) if gone is not None else None
    buried = buried_rows(from_dict(to_dict(kept))) if kept is not None else ()  # as a store gives it back
    rows = [r._replace(model=MODEL) for r in (*(usage_rows(conv) if conv is not None else ()), *buried)]
    assert [r for r in rows if r.deleted] == [r._replace(model=MODEL) for r in buried]
    assert [line["deleted"] for line in csv.DictReader(io.StringIO(csv_text(rows)))].count("yes") == len(buried)
    ledger_usd = sum(a.input_tokens * 1e-6 + a.output_tokens * 3e-6 for a in rows)
    whole = overall(rows)
    assert whole.attempts == len(rows) == len(csv_text(rows).splitlines()) - 1
    assert whole.input_tokens + whole.output_tokens == sum(r.tokens for r in rows)
    assert (whole.cost.usd or 0.0) == pytest.approx(ledger_usd)
    for lines in (by_day(rows), by_person(rows)):
        assert sum(x.attempts for x in lines) == whole.attempts
        assert sum(x.input_tokens + x.output_tokens for x in lines) == whole.input_tokens + whole.output_tokens
        assert total(x.cost for x in lines).usd == pytest.approx(whole.cost.usd or 0.0)
        assert total(x.cost for x in lines).estimated == any(priced(r).estimated for r in rows if r.tokens)
