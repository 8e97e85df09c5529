"""``SendQueued``: after an answer that completed, the first queued message is sent by itself.

Guarantees: once an attempt ended here (not lost), when ``ledger.queue.next_queued`` names a message (the attempt
completed, nothing runs, the queue is not paused), it is sent on a task of its own (``engine.queue.send_queued``,
decided again under the lock, so it is sent once); a refusal or a store that cannot save leaves it queued (the
page shows it waiting, with Send now). After an answer that was stopped or failed the reducer pauses the queue.
Nothing is sent by itself after a restart: only an attempt that ended in this process sends.
"""

from __future__ import annotations

import logging

from engine.attempts import Attempts, Ended
from engine.queue import send_queued
from ledger import queue
from ledger.decide import InputRejected
from ledger.errors import StoreError

log = logging.getLogger("ledger_chat.engine")


class SendQueued:
    def ended(self, end: Ended, door: Attempts) -> None:
        conv = door.read.conversation(end.conversation_id) if not end.lost else None
        item = queue.next_queued(conv, after=end.attempt_id) if conv is not None else None
        if item is not None:
            door.settings.spawn(self._send(door, end, item.queue_id), f"queued {item.queue_id}")

    async def _send(self, door: Attempts, end: Ended, queue_id: str) -> None:
        try:
            await send_queued(door, end.conversation_id, queue_id, after=end.attempt_id)
        except (InputRejected, StoreError) as exc:  # it stays queued; the page shows it waiting, with Send now
            log.warning("the queued message %s was not sent: %s", queue_id, exc)
