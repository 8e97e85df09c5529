"""``MessageQueue``: messages a person queued while an answer ran, and their sending (``ledger.queue`` decides).

Guarantees:
- ``add`` queues a message (its text and files checked as a Send checks them) only while an answer runs in the
  conversation, under the conversation's lock; when nothing runs it returns None and the caller sends it instead.
  ``edit`` and ``remove`` act on a message still queued, under the same lock; a refused one raises
  ``InputRejected`` with a sentence.
- A queued message is sent (``engine.policies.queue.send_queued``) as a turn of its own, started the way
  ``Engine.send`` starts one (the model's files admitted, saving checked, through the door's ``begin``: claimed before
  its first event, a compaction first when it must), with a ``submitted`` that carries its queue id, appended under
  the conversation's lock after ``ledger.queue.send_queued`` found it still queued: so it is sent once, whoever asks
  (two tabs pressing Send now, the automatic send racing a Send now). What sends one by itself after an answer
  completed is the ``SendQueued`` policy.
"""

from __future__ import annotations

from engine.attempts import Attempts
from engine.files import Attached, admit
from engine.policies import Ids as Ids
from engine.policies import existing, provider_of, require_saving, send_queued
from engine.stamps import new_id
from engine.text import valid_text
from ledger import decide, queue


class MessageQueue:
    def __init__(self, door: Attempts) -> None:
        self.door = door

    async def add(self, cid: str, text: str, model: str | None = None, attachments: Attached = ()) -> str | None:
        """Queue a message while an answer runs; its queue id, or None when nothing runs (send it instead)."""
        door = self.door
        decide.check_text(text, door.settings.limits.max_input_chars, files=bool(attachments))
        provider = provider_of(door, model)
        await admit(door.settings.files, existing(door, cid), provider.model, attachments, until=None)
        require_saving(await door.read.saving_fails())
        rt = door.runtimes.of(cid)
        async with rt.lock:
            if not door.answering(cid):
                return None
            queued = queue.enqueue(
                existing(door, cid), new_id("queue"), valid_text(text), attachments=attachments,
                model=provider.model, streaming=True,
            )  # fmt: skip
            door.read.append(queued)
        return queued.queue_id

    async def edit(self, cid: str, queue_id: str, text: str) -> None:
        decide.check_text(text, self.door.settings.limits.max_input_chars, files=True)
        async with self.door.runtimes.of(cid).lock:
            for event in queue.edit_queued(existing(self.door, cid), queue_id, valid_text(text)):
                self.door.read.append(event)

    async def remove(self, cid: str, queue_id: str) -> None:
        async with self.door.runtimes.of(cid).lock:
            self.door.read.append(queue.remove_queued(existing(self.door, cid), queue_id))

    async def send_now(self, cid: str, queue_id: str) -> Ids:
        """A person's Send now: the queued message as the next turn (refused while an answer runs, or once it was
        sent or removed). Returns (user message id, answer id)."""
        ids = await send_queued(self.door, cid, queue_id, after=None)
        assert ids is not None, "a Send now either starts the turn or is refused"
        return ids
