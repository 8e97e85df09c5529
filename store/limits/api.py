"""What every spend-limit store offers (``LimitStore``), the one in memory (``MemoryLimits``) and the record.

A ``SpendLimit`` caps what one person may spend per UTC day and per UTC month, in US dollars (the currency of
litellm's cost map and ``--model-info``) and/or in tokens (sent and received); a field left None is no cap of that
kind. The record under ``DEFAULT`` (``*``) is everyone's who has none of their own; a person's own record replaces
it whole (a person may so be given no cap at all).

Guarantees: ``limits`` gives key → ``SpendLimit`` as last written by any instance sharing the store (no cache);
``put`` replaces the key's record; ``remove`` drops it (the person falls back to the default) and says whether it
was there. Methods may block on I/O (call them off the event loop) and raise ``ledger.errors.StoreError`` with a
readable reason.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import Any, Protocol

DEFAULT = "*"  # the key of everyone's default (a person id never is "*")


@dataclass(frozen=True, slots=True)
class SpendLimit:
    day_usd: float | None = None
    month_usd: float | None = None
    day_tokens: int | None = None
    month_tokens: int | None = None

    def __post_init__(self) -> None:
        for value in (self.day_usd, self.month_usd, self.day_tokens, self.month_tokens):
            if value is not None and (not math.isfinite(value) or value < 0):
                raise ValueError("a spend limit is a number of dollars or tokens, 0 or more")

    @property
    def none(self) -> bool:
        """Whether nothing is capped."""
        return all(v is None for v in (self.day_usd, self.month_usd, self.day_tokens, self.month_tokens))

    def as_dict(self) -> dict[str, Any]:
        return {
            "day_usd": self.day_usd, "month_usd": self.month_usd,
            "day_tokens": self.day_tokens, "month_tokens": self.month_tokens,
        }  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SpendLimit:
        def number(key: str, kind: type) -> Any:
            value = data.get(key)
            return None if value is None else kind(value)

        return cls(number("day_usd", float), number("month_usd", float), number("day_tokens", int),
                   number("month_tokens", int))  # fmt: skip


class LimitStore(Protocol):
    def limits(self) -> dict[str, SpendLimit]: ...

    def put(self, key: str, limit: SpendLimit) -> None: ...

    def remove(self, key: str) -> bool: ...


class MemoryLimits:
    def __init__(self) -> None:
        self._limits: dict[str, SpendLimit] = {}
        self._lock = threading.Lock()

    def limits(self) -> dict[str, SpendLimit]:
        with self._lock:
            return dict(self._limits)

    def put(self, key: str, limit: SpendLimit) -> None:
        with self._lock:
            self._limits[key] = limit

    def remove(self, key: str) -> bool:
        with self._lock:
            return self._limits.pop(key, None) is not None
