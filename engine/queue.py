"""``MessageQueue``: messages a person queued while an answer ran, and their sending (``ledger.queue`` decides).

Guarantees:
- ``add`` queues a message (its text and files checked as a Send checks them) only while an answer runs in the
  conversation, under the conversation's lock; when nothing runs it returns None and the caller sends it instead.
  ``edit`` and ``remove`` act on a message still queued, under the same lock; a refused one raises
  ``InputRejected`` with a sentence.
- A queued message is sent (``send_queued``) as a turn of its own, started the way ``Engine.send`` starts one
  (the model's files admitted, saving checked, through the door's ``begin``: claimed before its first event, a
  compaction first when it must), with a ``submitted`` that carries its queue id, appended under the
  conversation's lock after ``ledger.queue.send_queued`` found it still queued: so it is sent once, whoever asks
  (two tabs pressing Send now, the automatic send racing a Send now). What sends one by itself after an answer
  completed is the ``SendQueued`` policy.
"""

from __future__ import annotations

from engine.attempts import Attempts
from engine.files.admit import Attached, admit
from engine.provider import ProviderConfig
from engine.stamps import new_id
from engine.text import valid_text
from ledger import decide, queue
from ledger.decide import InputRejected, NewAttempt
from ledger.state import ConversationState

Ids = tuple[str, str]  # (user message id, answer id)


class MessageQueue:
    def __init__(self, door: Attempts) -> None:
        self.door = door

    async def add(self, cid: str, text: str, model: str | None = None, attachments: Attached = ()) -> str | None:
        """Queue a message while an answer runs; its queue id, or None when nothing runs (send it instead)."""
        door = self.door
        decide.check_text(text, door.settings.limits.max_input_chars, files=bool(attachments))
        provider = provider_of(door, model)
        await admit(door.settings.files, _require(door, cid), provider.model, attachments, until=None)
        _require_saving(await door.read.saving_fails())
        rt = door.runtimes.of(cid)
        async with rt.lock:
            if not door.answering(cid):
                return None
            queued = queue.enqueue(
                _require(door, cid), new_id("queue"), valid_text(text), attachments=attachments,
                model=provider.model, streaming=True,
            )  # fmt: skip
            door.read.append(queued)
        return queued.queue_id

    async def edit(self, cid: str, queue_id: str, text: str) -> None:
        decide.check_text(text, self.door.settings.limits.max_input_chars, files=True)
        async with self.door.runtimes.of(cid).lock:
            for event in queue.edit_queued(_require(self.door, cid), queue_id, valid_text(text)):
                self.door.read.append(event)

    async def remove(self, cid: str, queue_id: str) -> None:
        async with self.door.runtimes.of(cid).lock:
            self.door.read.append(queue.remove_queued(_require(self.door, cid), queue_id))

    async def send_now(self, cid: str, queue_id: str) -> Ids:
        """A person's Send now: the queued message as the next turn (refused while an answer runs, or once it was
        sent or removed). Returns (user message id, answer id)."""
        ids = await send_queued(self.door, cid, queue_id, after=None)
        assert ids is not None, "a Send now either starts the turn or is refused"
        return ids


async def send_queued(door: Attempts, cid: str, queue_id: str, *, after: str | None) -> Ids | None:
    """Send a queued message (``after``: by itself, once that attempt ended; None: a person's Send now)."""
    item = queue.pending(_require(door, cid), queue_id)
    if item is None:
        raise InputRejected(queue.GONE)
    provider = provider_of(door, item.model)
    await admit(door.settings.files, _require(door, cid), provider.model, item.attachments, until=None)
    _require_saving(await door.read.saving_fails())
    if door.peers.streaming(cid) is None:
        await door.peers.writable(cid)
    rt = door.runtimes.of(cid)
    async with rt.lock:
        user_id, answer_id, new = new_id("msg"), new_id("msg"), NewAttempt(new_id("att"), provider.model)
        sending = queue.send_queued(
            _require(door, cid), queue_id, new, user_id=user_id, answer_id=answer_id,
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


def _require_saving(reason: str | None) -> None:
    if reason is not None:
        raise InputRejected(f"Saving fails: {reason}. Nothing is queued or sent until it works again.")


def _require(door: Attempts, cid: str) -> ConversationState:
    return decide.existing(door.read.conversation(cid))
