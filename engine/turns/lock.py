"""What the one cancel entry (``AttemptWorker.cancel``) works with: ``ChatLock``, the conversation's lock (cancel
and finalize are serialized by it), which says when taking it would wait, and ``Ask``, what one cancel asks.

Guarantees: it is an ``asyncio.Lock`` (first come, first served); ``busy`` is true while it is held or anyone waits
for it, which is exactly when ``acquire`` would suspend: so the one cancel entry (``AttemptWorker.cancel``) decides
in its caller's own step when the lock is free, and otherwise waits in a task of its own. No private attribute of
asyncio is read.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from engine.provider import Failure
from ledger.events import CancelSource


class ChatLock(asyncio.Lock):
    def __init__(self) -> None:
        super().__init__()
        self._waiting = 0

    async def acquire(self) -> Literal[True]:
        if not self.busy:  # asyncio's own fast path: taken without suspending
            return await super().acquire()
        self._waiting += 1
        try:
            return await super().acquire()
        finally:
            self._waiting -= 1

    @property
    def busy(self) -> bool:
        """Held, or waited for: ``acquire`` would suspend."""
        return self.locked() or self._waiting > 0


def always() -> bool:  # (a cancel that always still holds)
    return True


@dataclass(frozen=True, slots=True)
class Ask:
    """What one cancel asks (a turn or attempt None: whichever runs; ``failure``: a timeout's; ``still``: it holds)."""

    source: CancelSource
    keep_partial: bool
    turn: int | None
    attempt_id: str | None
    requested_by: str | None
    failure: Failure | None
    still: Callable[[], bool]
