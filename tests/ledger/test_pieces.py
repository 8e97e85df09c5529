"""``ledger.pieces.Pieces``: text that grows by appending reads as the plain string would, from any value of a
lineage, however many pieces it has (the buffer keeps one joined str, not a list of every piece: issue 11)."""

from __future__ import annotations

import gc

from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.pieces import EMPTY, FOLD, Pieces

appends = st.lists(st.tuples(st.integers(min_value=0), st.text(max_size=3)), max_size=3 * FOLD)


@settings(max_examples=150, deadline=None)
@given(appends, st.integers(min_value=0, max_value=40))
def test_every_value_reads_as_the_string_it_was_built_from(plan: list[tuple[int, str]], start: int) -> None:
    values: list[tuple[Pieces, str]] = [(EMPTY, "")]
    for pick, piece in plan:
        base, text = values[pick % len(values)]  # often an old value: its lineage forks
        values.append((base.plus(piece), text + piece))
        if pick % 7 == 0:
            assert values[-1][0].text == text + piece  # reads in between appends
    for value, text in values:
        assert value.text == str(value) == text and len(value) == len(text) and bool(value) == bool(text)
        assert value.tail(start) == text[start:]
        assert value == text and value == Pieces.of(text) and hash(value) == hash(text)


def test_a_long_text_keeps_a_few_references_for_the_garbage_collector_to_walk() -> None:
    text = EMPTY
    for n in range(20 * FOLD):
        text = text.plus(f"w{n % 1000:03d} ")
    assert text.tail(5 * (20 * FOLD - 1)) == f"w{(20 * FOLD - 1) % 1000:03d} "
    assert walked_references(text) < 2 * FOLD


def walked_references(root: object) -> int:
    """How many references a full collection visits from ``root`` on (types and what they hold left out)."""
    count, seen, stack = 0, {id(root)}, [root]
    while stack:
        for ref in gc.get_referents(stack.pop()):
            count += 1
            if gc.is_tracked(ref) and not isinstance(ref, type) and id(ref) not in seen:
                seen.add(id(ref))
                stack.append(ref)
    return count
