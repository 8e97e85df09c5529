"""``Titles``: after a chat's first answer the model names it, in an attempt of its own (``ledger.titles``).

Guarantees:
- After an answer that completed (``ended``), when ``settings.titles`` is on and the chat wants a title
  (``ledger.titles.wants_title``: never renamed, not a branch, fewer than two asked) and nothing is queued, a title
  starts on a task of its own: under the lock, only if nothing runs, nobody is starting an answer (``making_way``)
  and the chat still wants one; through the door (claimed before its ``started``, ``ledger.side_starts``), run by
  an ``AttemptWorker`` like any answer: request ids, chunks, the stale rule, timeouts, re-sends, and the one
  cancel path (Stop, leaving, delete, shutdown). The model that gave the answer makes the title.
- When a title attempt ended complete, a ``titled`` is appended in the same step, under the lock, with the title
  cleaned (``ledger.titles.clean_title``) and the title the chat had when it started (``replaces``): the reducer
  applies it only if that is still the title, so a rename before or during its generation wins. A title that was
  stopped, failed (a provider error stays in its own attempt: nothing reaches the chat) or came out empty leaves
  the title as it was; a deleted chat gets nothing.
- Never blocking a send: a title does not make the chat busy (``Runtimes.answering``); a Send (``making_way``)
  discards a title still generating through the one cancel path (source ``user``, nothing kept) before it takes
  the lock, and no title starts while it waits; the title is asked again after the next answer. A title another
  instance makes is cancelled through ``Peers`` by its owner.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from engine.attempts import Attempts, Ended, LiveElsewhere, Runtime
from engine.stamps import new_id
from ledger.errors import LedgerError
from ledger.events import Titled
from ledger.side_starts import title_started
from ledger.titles import clean_title, wants_title

log = logging.getLogger("ledger_chat.engine")


class Titles:
    def __init__(self) -> None:
        self._replaces: dict[str, str] = {}  # title attempt id -> the chat's title when it started
        self._making_way: dict[str, int] = {}  # conversation id -> answers waiting to start in it

    def ended(self, end: Ended, door: Attempts) -> None:
        """An attempt ended, under its conversation's lock (see the module's guarantees)."""
        replaces = self._replaces.pop(end.attempt_id, None)
        conv = door.read.conversation(end.conversation_id) if not end.lost else None
        if conv is None:
            return
        if end.purpose == "title":
            attempt = conv.attempts.get(end.attempt_id)
            title = clean_title(attempt.text) if attempt is not None and attempt.status == "complete" else ""
            if title and replaces is not None and conv.title == replaces:
                titled = Titled(conversation_id=end.conversation_id, title=title, replaces=replaces,
                                from_attempt=end.attempt_id)  # fmt: skip
                try:
                    door.read.append(titled)
                except LedgerError as exc:  # saving fails: the title is not applied, nothing else is lost
                    log.warning("the title of %s was not saved: %s", end.conversation_id, exc)
        elif door.settings.titles and end.purpose == "answer" and not conv.queue and wants_title(conv, end.attempt_id):
            cid = end.conversation_id
            door.settings.spawn(self._start(door, cid, end.attempt_id), f"title {cid}")

    @asynccontextmanager
    async def making_way(self, door: Attempts, cid: str) -> AsyncIterator[None]:
        """Around an answer's start (before it takes the lock): no title starts meanwhile, and one generating is
        discarded first (the one cancel path; it awaits the title's end)."""
        self._making_way[cid] = self._making_way.get(cid, 0) + 1
        try:
            worker = door.runtimes.active(cid)
            if worker is not None and worker.run.purpose == "title":
                await worker.cancel("user", keep_partial=False, attempt_id=worker.run.attempt_id)
            elif worker is None and (elsewhere := self._title_elsewhere(door, cid)) is not None:  # its owner cancels
                await door.peers.cancel(cid, elsewhere, "user", False)
            yield
        finally:
            self._making_way[cid] -= 1
            if not self._making_way[cid]:
                del self._making_way[cid]

    async def _start(self, door: Attempts, cid: str, after: str) -> None:
        rt = door.runtimes.get(cid)
        if rt is None:
            return
        try:
            async with rt.lock:
                await self._start_locked(door, rt, cid, after)
        except LedgerError as exc:  # the claim was refused, or saving fails: the chat keeps its title
            log.warning("no title for %s: %s", cid, exc)

    async def _start_locked(self, door: Attempts, rt: Runtime, cid: str, after: str) -> None:
        conv = door.read.conversation(cid)
        if conv is None or not self._free(rt, cid) or conv.live_attempt() is not None or conv.queue:
            return
        answer = conv.attempts.get(after)
        provider = door.settings.provider_for(answer.model if answer is not None else None)
        if provider is None or not wants_title(conv, after):
            return
        started = title_started(conv, after, attempt_id=new_id("att"), message_id=new_id("msg"), model=provider.model)
        self._replaces[started.attempt_id] = conv.title
        try:  # a Send that came while the claim was made goes first: then nothing starts
            worker = await door.start(rt, None, started, provider, still=lambda: self._free(rt, cid))
        except BaseException:
            worker = None
            raise
        finally:
            if worker is None:
                self._replaces.pop(started.attempt_id, None)

    def _title_elsewhere(self, door: Attempts, cid: str) -> LiveElsewhere | None:
        """A title being made in this chat by another instance (``app.cluster``), as the ledger shows it."""
        conv = door.read.state.conversations.get(cid)
        live = [a for a in conv.attempts.values() if a.purpose == "title" and a.is_live] if conv is not None else []
        return LiveElsewhere(live[-1].attempt_id, conv.turn) if live and conv is not None else None

    def _free(self, rt: Runtime, cid: str) -> bool:
        return rt.active is None and cid not in self._making_way
