"""Spend: what each person used, folded from the ledger and priced from the cost map (``book``), the limits in
force and the periods they count over (``limits``), and the check before every model request (``guard``).

Guarantees: no counter beside the ledger (a person's spend is the sum over their conversations' attempts, every
end and purpose included); the limits live beside the accounts (``store.limits``), never in the ledger.
"""

from __future__ import annotations

from engine.spend.book import ANYONE, Spent, UsageBook, priced, spent
from engine.spend.guard import SpendGuard, utc_now
from engine.spend.limits import PERIODS, Over, Period, describe, effective, money, parse_limit, period_start, resets

__all__ = [
    "ANYONE",
    "PERIODS",
    "Over",
    "Period",
    "SpendGuard",
    "Spent",
    "UsageBook",
    "describe",
    "effective",
    "money",
    "parse_limit",
    "period_start",
    "priced",
    "resets",
    "spent",
    "utc_now",
]
