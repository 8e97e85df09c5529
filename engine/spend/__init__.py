"""Spend: what each person used, folded from the ledger and priced from the cost map (``book``), the limits in
force and the periods they count over (``limits``), the check before every model request (``guard``), and usage
grouped for the usage page and its CSV (``report``).

Guarantees: no counter beside the ledger (a person's spend is the sum over their conversations' attempts, every
end and purpose included); the limits live beside the accounts (``store.limits``), never in the ledger.
"""

from __future__ import annotations

from engine.spend.book import ANYONE, Spent, UsageBook, priced, spent
from engine.spend.guard import SpendGuard, utc_now
from engine.spend.limits import PERIODS, Over, Period, describe, effective, money, parse_limit, period_start, resets
from engine.spend.report import COLUMNS, Line, by_day, by_person, csv_text, overall

__all__ = [
    "ANYONE",
    "COLUMNS",
    "Line",
    "PERIODS",
    "Over",
    "Period",
    "SpendGuard",
    "Spent",
    "UsageBook",
    "by_day",
    "by_person",
    "csv_text",
    "describe",
    "effective",
    "money",
    "overall",
    "parse_limit",
    "period_start",
    "priced",
    "resets",
    "spent",
    "utc_now",
]
