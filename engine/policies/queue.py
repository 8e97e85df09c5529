"""``SendQueued``: after an answer that completed, the first queued message is sent by itself.

Guarantees: once an attempt ended here (not lost), when ``ledger.queue.next_queued`` names a message (the attempt
completed, nothing runs, the queue is not paused), it is sent on a task of its own (``send_queued``, decided again
under the lock, so it is sent once; a person's Send now goes the same way); a refusal or a store that cannot save
leaves it queued (the page shows it waiting, with Send now). After an answer that was stopped or failed the reducer
pauses the queue. Nothing is sent by itself after a restart: only an attempt that ended in this process sends.
"""

from __future__ import annotations

import logging

from engine.attempts import Attempts, Ended
from engine.files import admit
from engine.people import acting_as
from engine.provider import ProviderConfig
from engine.stamps import new_id
from ledger import decide, queue
from ledger.decide import InputRejected, NewAttempt
from ledger.errors import StoreError
from ledger.state import ConversationState

log = logging.getLogger("ledger_chat.engine")
Ids = tuple[str, str]  # (user message id, answer id)


class SendQueued:
    def ended(self, end: Ended, door: Attempts) -> None:
        conv = door.read.conversation(end.conversation_id) if not end.lost else None
        item = queue.next_queued(conv, after=end.attempt_id) if conv is not None else None
        if item is not None:
            door.settings.spawn(self._send(door, end, item.queue_id), f"queued {item.queue_id}")

    async def _send(self, door: Attempts, end: Ended, queue_id: str) -> None:
        conv = door.read.conversation(end.conversation_id)
        try:
            with acting_as(conv.owner if conv is not None else None):  # sent for whoever the chat belongs to
                await send_queued(door, end.conversation_id, queue_id, after=end.attempt_id)
        except (InputRejected, StoreError) as exc:  # it stays queued; the page shows it waiting, with Send now
            log.warning("the queued message %s was not sent: %s", queue_id, exc)


async def send_queued(door: Attempts, cid: str, queue_id: str, *, after: str | None) -> Ids | None:
    """Send a queued message (``after``: by itself, once that attempt ended; None: a person's Send now)."""
    item = queue.pending(existing(door, cid), queue_id)
    if item is None:
        raise InputRejected(queue.GONE)
    provider = provider_of(door, item.model)
    await admit(door.settings.files, existing(door, cid), provider.model, item.attachments, until=None)
    require_saving(await door.read.saving_fails())
    if door.peers.streaming(cid) is None:
        await door.peers.writable(cid)
    rt = door.runtimes.of(cid)
    async with rt.lock:
        user_id, answer_id, new = new_id("msg"), new_id("msg"), NewAttempt(new_id("att"), provider.model)
        sending = queue.send_queued(
            existing(door, cid), queue_id, new, user_id=user_id, answer_id=answer_id,
            streaming=door.answering(cid), after=after,
        )  # fmt: skip
        if sending is None:
            return None
        await door.begin(rt, *sending, provider)
    return user_id, answer_id


def provider_of(door: Attempts, model: str | None) -> ProviderConfig:
    provider = door.settings.provider_for(model) or door.settings.provider_for(None)
    assert provider is not None, "the app always has its default model"
    return provider


def require_saving(reason: str | None) -> None:
    if reason is not None:
        raise InputRejected(f"Saving fails: {reason}. Nothing is queued or sent until it works again.")


def existing(door: Attempts, cid: str) -> ConversationState:
    return decide.existing(door.read.conversation(cid))
