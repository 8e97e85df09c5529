"""Spend limits in force: whose limit applies, the periods they count over, and the sentence a refusal says.

Guarantees:
- ``parse_limit`` reads ``--spend-limit`` and ``users limit``'s values: comma-separated ``AMOUNT/PERIOD`` items,
  ``$0.05/day`` or ``0.05/day`` in US dollars, ``20000 tokens/month`` in tokens, ``none`` for no cap; anything
  else raises ``ValueError`` with one sentence naming the item.
- ``effective``: a person's own record (``store.limits``), else the stored default (``*``), else the deployment's
  ``--spend-limit``; personal mode's one person (None) has the stored default, else the option.
- Periods are UTC: a day from 00:00 UTC, a month from the 1st at 00:00 UTC; ``resets`` is the next such start.
- ``over`` compares what was spent in each period with each cap: spent at or over a cap is over it (a cap of 0
  allows nothing); the first cap reached is the one said, the day's before the month's, dollars before tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from engine.spend.book import Spent
from store.limits import DEFAULT, SpendLimit

Period = Literal["day", "month"]
PERIODS: tuple[Period, ...] = ("day", "month")
ADJECTIVE = {"day": "daily", "month": "monthly"}


def parse_limit(text: str) -> SpendLimit:
    values: dict[str, float | int] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item or item.lower() == "none":
            continue
        amount, slash, period = item.rpartition("/")
        period = period.strip().lower()
        if not slash or period not in PERIODS:
            raise ValueError(f"{item!r}: write AMOUNT/day or AMOUNT/month, e.g. $0.50/day or 20000 tokens/month")
        amount = amount.strip().lower()
        tokens = amount.endswith("tokens")
        number = amount.removesuffix("tokens").strip().removeprefix("$").replace("_", "")
        try:
            value: float | int = int(number) if tokens else float(number)
        except ValueError:
            raise ValueError(f"{item!r}: {number!r} is not a number") from None
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{item!r}: a limit is 0 or more")
        values[f"{period}_{'tokens' if tokens else 'usd'}"] = value
    return SpendLimit(**values)  # type: ignore[arg-type]


def describe(limit: SpendLimit) -> str:
    """``parse_limit``'s inverse: how a limit is written ("none" for no cap)."""
    items = [f"${limit.day_usd:g}/day" if limit.day_usd is not None else "",
             f"${limit.month_usd:g}/month" if limit.month_usd is not None else "",
             f"{limit.day_tokens} tokens/day" if limit.day_tokens is not None else "",
             f"{limit.month_tokens} tokens/month" if limit.month_tokens is not None else ""]  # fmt: skip
    return ", ".join(i for i in items if i) or "none"


def effective(stored: dict[str, SpendLimit], person: str | None, fallback: SpendLimit) -> SpendLimit:
    if person is not None and person in stored:
        return stored[person]
    return stored.get(DEFAULT, fallback)


def period_start(period: Period, now: datetime) -> datetime:
    day = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return day if period == "day" else day.replace(day=1)


def resets(period: Period, now: datetime) -> datetime:
    start = period_start(period, now)
    if period == "day":
        return start + timedelta(days=1)
    return (start + timedelta(days=32)).replace(day=1)


def iso(moment: datetime) -> str:
    """The ledger's time format (``engine.stamps.now_iso``): comparable as text with ``started_ts``."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True, slots=True)
class Over:
    """A cap reached: which, what was spent against it, and when its period starts again."""

    period: Period
    unit: Literal["usd", "tokens"]
    spent: float
    cap: float
    estimated: bool
    resets: datetime

    @property
    def sentence(self) -> str:
        when = f"at {self.resets:%H:%M} UTC" if self.period == "day" else f"on {self.resets:%-d %B} at 00:00 UTC"
        kind = ADJECTIVE[self.period]
        if self.unit == "usd":
            mark = " (estimated)" if self.estimated else ""
            return f"You have spent {money(self.spent)}{mark} of your {money(self.cap)} {kind} limit; it resets {when}."
        return f"You have used {self.spent:,.0f} tokens of your {self.cap:,.0f}-token {kind} limit; it resets {when}."


def over(limit: SpendLimit, spent: dict[Period, Spent], now: datetime) -> Over | None:
    for period in PERIODS:
        used = spent[period]
        usd_cap = limit.day_usd if period == "day" else limit.month_usd
        token_cap = limit.day_tokens if period == "day" else limit.month_tokens
        if usd_cap is not None and used.usd >= usd_cap:
            return Over(period, "usd", used.usd, usd_cap, used.cost.estimated, resets(period, now))
        if token_cap is not None and used.tokens >= token_cap:
            return Over(period, "tokens", used.tokens, token_cap, False, resets(period, now))
    return None


def money(usd: float) -> str:
    """Dollars with the digits a small limit needs ($0.05, $0.0031, $0.00009, $12.40)."""
    if usd >= 1 or usd == 0 or round(usd, 2) == usd:
        return f"${usd:,.2f}"
    return f"${usd:.6f}".rstrip("0").rstrip(".")
