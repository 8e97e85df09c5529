"""The event loop's share for reading streams: all streams together read for at most ``SHARE_SECONDS`` a loop turn.

Why: a stream whose chunks are already buffered (the app fell behind a fast provider, or a busy machine left it
no CPU for a while) never suspends on its read. Each stream giving the loop back after ``TURN_SECONDS`` of its own
(``engine.turns.streaming``) is not enough with many streams: 100 streams with a backlog made one loop turn last 100 x
5 ms, and a Stop, a page's click or a render waited that long for each of the several turns it needs.

Guarantees:
- ``used_up(loop)`` is asked after each delta a stream recorded. The first stream to ask in a loop turn opens that
  turn's share (``SHARE_SECONDS``, closed by a callback the loop runs on its next turn); once the share is spent,
  every stream asking gives the loop back (``await asyncio.sleep(0)``) after the delta it just recorded. A stream
  records at least one delta each time it runs, so none starves, and every delta is still recorded, in order: only
  when it is read changes, never what is recorded (the chunk gate is ``engine.turns.attempt.AttemptRun.receive``).
- So one loop turn spends at most ``SHARE_SECONDS`` plus one delta per stream on reading, however many streams have
  a backlog; what else is ready (a cancel, a websocket message, a page's render) runs in the next turn.
- One share per thread (the loop running in it); nothing is kept between turns but the open share.
"""

from __future__ import annotations

import asyncio
import threading

SHARE_SECONDS = 0.008  # the time all streams together read in one loop turn before others get the loop back


class LoopShare(threading.local):
    def __init__(self) -> None:
        self.until: float | None = None  # the end of the open share (None: none is open in this turn)
        self.loop: asyncio.AbstractEventLoop | None = None  # the loop it was opened on (a test may run several)

    def used_up(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Whether the streams spent this loop turn's share (the first call in a turn opens it)."""
        until, now = self.until, loop.time()
        if until is None or self.loop is not loop:
            self.until, self.loop = now + SHARE_SECONDS, loop
            loop.call_soon(self._close)
            return False
        return now > until

    def _close(self) -> None:
        self.until = None


SHARE = LoopShare()
