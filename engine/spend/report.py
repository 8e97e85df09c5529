"""Usage as the usage page and its CSV show it: rows grouped by day, model, status and whether their chat was
deleted, or by person, each line's tokens and priced cost; and every row as a CSV line (``deleted``: "yes" for
a deleted chat's).

Guarantees: grouping only adds: the lines of a grouping sum to the rows they group (attempts, tokens, known cost;
estimated when any part is; unknown prices counted, never $0), so a page's total is the sum over the ledger
(tests/engine/test_spend_book.py); a stopped answer's line carries its partial cost like any other. The CSV holds
one line per attempt (no text of any message: times, ids, model, purpose, status, tokens, dollars).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from engine.provider import Cost, total
from engine.spend.book import priced
from ledger.usage import UsageRow

COLUMNS = (
    "started", "day", "person", "conversation_id", "attempt_id", "model", "purpose", "status", "input_tokens",
    "output_tokens", "cached_tokens", "reasoning_tokens", "usd", "estimated", "deleted",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Line:
    """One group of rows: its key (e.g. (day, model, status)), how many attempts, their tokens and cost."""

    key: tuple[str, ...]
    attempts: int
    input_tokens: int
    output_tokens: int
    cost: Cost


def grouped(rows: Iterable[UsageRow], key: Callable[[UsageRow], tuple[str, ...]]) -> list[Line]:
    groups: dict[tuple[str, ...], list[UsageRow]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    return [line(k, groups[k]) for k in sorted(groups)]


def line(key: tuple[str, ...], rows: list[UsageRow]) -> Line:
    return Line(key, len(rows), sum(r.input_tokens for r in rows), sum(r.output_tokens for r in rows),
                total(priced(r) for r in rows))  # fmt: skip


def by_day(rows: Iterable[UsageRow]) -> list[Line]:
    """Newest day first; within a day by model, then status (live chats' before deleted chats')."""
    lines = grouped(rows, lambda r: (r.day, r.model, r.status, "deleted" if r.deleted else ""))
    return sorted(lines, key=lambda x: x.key[0], reverse=True)  # (stable: model and status stay in order)


def by_person(rows: Iterable[UsageRow]) -> list[Line]:
    return grouped(rows, lambda r: (r.owner or "",))


def overall(rows: Iterable[UsageRow]) -> Line:
    return line((), list(rows))


def csv_text(rows: Iterable[UsageRow]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for r in sorted(rows, key=lambda r: (r.ts, r.attempt_id)):
        cost = priced(r)
        usd = "" if cost.usd is None else f"{cost.usd:.8f}"
        writer.writerow((
            r.ts, r.day, r.owner or "", r.conversation_id, r.attempt_id, r.model, r.purpose, r.status,
            r.input_tokens, r.output_tokens, r.cached_tokens, r.reasoning_tokens, usd, "yes" if cost.estimated else "",
            "yes" if r.deleted else "",
        ))  # fmt: skip
    return out.getvalue()
