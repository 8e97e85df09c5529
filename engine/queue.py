"""``MessageQueue``: messages a person queued while an answer ran, and their sending (``ledger.queue`` decides).

Guarantees:
- ``add`` queues a message (its text and files checked as a Send checks them) only while an answer runs in the
  conversation, under the conversation's lock; when nothing runs it returns None and the caller sends it instead.
  ``edit`` and ``remove`` act on a message still queued, under the same lock; a refused one raises
  ``InputRejected`` with a sentence.
- A queued message is sent as a turn of its own, started the way ``Engine.send`` starts one (the model's files
  admitted, saving checked, the attempt claimed before its first event), with a ``submitted`` that carries its
  queue id, appended under the conversation's lock after ``ledger.queue.send_queued`` found it still queued: so
  it is sent once, whoever asks (two tabs pressing Send now, the automatic send racing a Send now).
- ``ended`` hears of every attempt's end (after ``engine.presence``): after an answer that completed, the first
  queued message is sent by itself (``ledger.queue.next_queued``, decided again under the lock); after one that
  was stopped or failed the queue is paused (the reducer) until Send now, a Retry or a Continue. Nothing is sent by
  itself after a restart: only an attempt that ended in this process sends.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol

from engine.files.admit import Attached, admit
from engine.peers import Peers
from engine.provider import ProviderConfig
from engine.read_side import ReadSide
from engine.runtimes import Runtime, Runtimes
from engine.settings import EngineSettings
from engine.stamps import new_id
from engine.starting import Starting
from engine.text import valid_text
from engine.worker import AttemptWorker, Workplace
from ledger import decide, queue
from ledger.decide import InputRejected, NewAttempt
from ledger.errors import StoreError
from ledger.events import Started, Submitted
from ledger.state import ConversationState

log = logging.getLogger("ledger_chat.engine")
Ids = tuple[str, str]  # (user message id, answer id)
Begin = Callable[[Runtime, Submitted, Started, Starting], Awaitable[None]]


class Host(Protocol):
    """What the queue uses of its engine (``engine.engine.Engine``)."""

    settings: EngineSettings
    read: ReadSide
    peers: Peers

    def conversation(self, cid: str) -> ConversationState | None: ...

    def is_streaming(self, cid: str) -> bool: ...

    def spawn(self, coro: Coroutine[Any, Any, None], name: str) -> None: ...


class MessageQueue:
    def __init__(self, host: Host, runtimes: Runtimes, ended: Callable[[AttemptWorker], None]) -> None:
        self.host, self.runtimes, self.inner = host, runtimes, ended
        self.place: Workplace | None = None  # the engine's, set once it is made
        self.begin: Begin | None = None  # the engine's way to start an answer (a compaction first if it must)

    async def add(self, cid: str, text: str, model: str | None = None, attachments: Attached = ()) -> str | None:
        """Queue a message while an answer runs; its queue id, or None when nothing runs (send it instead)."""
        decide.check_text(text, self.host.settings.limits.max_input_chars, files=bool(attachments))
        provider = self._provider(model)
        await admit(self.host.settings.files, self._require(cid), provider.model, attachments, until=None)
        self._require_saving(await self.host.read.saving_fails())
        rt = self.runtimes.of(cid)
        async with rt.lock:
            if not self.host.is_streaming(cid):
                return None
            queued = queue.enqueue(
                self._require(cid), new_id("queue"), valid_text(text), attachments=attachments,
                model=provider.model, streaming=True,
            )  # fmt: skip
            self.host.read.append(queued)
        return queued.queue_id

    async def edit(self, cid: str, queue_id: str, text: str) -> None:
        decide.check_text(text, self.host.settings.limits.max_input_chars, files=True)
        async with self.runtimes.of(cid).lock:
            for event in queue.edit_queued(self._require(cid), queue_id, valid_text(text)):
                self.host.read.append(event)

    async def remove(self, cid: str, queue_id: str) -> None:
        async with self.runtimes.of(cid).lock:
            self.host.read.append(queue.remove_queued(self._require(cid), queue_id))

    async def send_now(self, cid: str, queue_id: str) -> Ids:
        """A person's Send now: the queued message as the next turn (refused while an answer runs, or once it was
        sent or removed). Returns (user message id, answer id)."""
        ids = await self._send(cid, queue_id, after=None)
        assert ids is not None, "a Send now either starts the turn or is refused"
        return ids

    def ended(self, worker: AttemptWorker) -> None:
        """An attempt ended (under its conversation's lock): after an answer that completed, send the next queued
        message (on a task of its own: it takes the lock)."""
        self.inner(worker)
        cid, attempt_id = worker.run.conversation_id, worker.run.attempt_id
        conv = self.host.conversation(cid) if not worker.run.lost else None
        item = queue.next_queued(conv, after=attempt_id) if conv is not None else None
        if item is not None:
            self.host.spawn(self._send_next(cid, item.queue_id, attempt_id), f"queued {item.queue_id}")

    async def _send_next(self, cid: str, queue_id: str, after: str) -> None:
        try:
            await self._send(cid, queue_id, after=after)
        except (InputRejected, StoreError) as exc:  # it stays queued; the page shows it waiting, with Send now
            log.warning("the queued message %s was not sent: %s", queue_id, exc)

    async def _send(self, cid: str, queue_id: str, *, after: str | None) -> Ids | None:
        item = queue.pending(self._require(cid), queue_id)
        if item is None:
            raise InputRejected(queue.GONE)
        provider = self._provider(item.model)
        await admit(self.host.settings.files, self._require(cid), provider.model, item.attachments, until=None)
        self._require_saving(await self.host.read.saving_fails())
        if self.host.peers.streaming(cid) is None:
            await self.host.peers.writable(cid)
        rt = self.runtimes.of(cid)
        async with rt.lock:
            user_id, answer_id, new = new_id("msg"), new_id("msg"), NewAttempt(new_id("att"), provider.model)
            sending = queue.send_queued(
                self._require(cid), queue_id, new, user_id=user_id, answer_id=answer_id,
                streaming=self.host.is_streaming(cid), after=after,
            )  # fmt: skip
            if sending is None:
                return None
            assert self.place is not None and self.begin is not None, "the engine gave its workplace"
            how = Starting(provider, lambda: self.host.conversation(cid), self.place)
            await self.begin(rt, *sending, how)
        return user_id, answer_id

    def _provider(self, model: str | None) -> ProviderConfig:
        provider = self.host.settings.provider_for(model) or self.host.settings.provider_for(None)
        assert provider is not None, "the app always has its default model"
        return provider

    def _require_saving(self, reason: str | None) -> None:
        if reason is not None:
            raise InputRejected(f"Saving fails: {reason}. Nothing is queued or sent until it works again.")

    def _require(self, cid: str) -> ConversationState:
        return decide.existing(self.host.conversation(cid))
