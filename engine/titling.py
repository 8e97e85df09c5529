"""Titles, run: after a chat's first answer the model names it, in an attempt of its own (``ledger.titles``).

Guarantees:
- ``ended`` hears of every attempt's end (it wraps the queue's, under the conversation's lock, after the queue and
  ``engine.presence``). After an answer that completed, when ``settings.titles`` is on and the chat wants a title
  (``ledger.titles.wants_title``: never renamed, not a branch, fewer than two asked) and nothing is queued, a title
  starts on a task of its own: under the lock, only if nothing runs, nobody is starting an answer (``making_way``)
  and the chat still wants one; claimed through ``Peers`` before its ``started`` (``purpose="title"``, ``through``
  the answer), run by an ``AttemptWorker`` like any answer: request ids, chunks, the stale rule, timeouts,
  re-sends, and the one cancel path (Stop, leaving, delete, shutdown: ``Engine.cancel`` reaches it as the
  conversation's running attempt). The model that gave the answer makes the title.
- When a title attempt ended complete, a ``titled`` is appended in the same step, under the lock, with the title
  cleaned (``ledger.titles.clean_title``) and the title the chat had when it started (``replaces``): the reducer
  applies it only if that is still the title, so a rename before or during its generation wins. A title that was
  stopped, failed (a provider error stays in its own attempt: nothing reaches the chat) or came out empty leaves
  the title as it was; a deleted chat gets nothing.
- Never blocking a send: a title does not make the chat busy (``Runtimes.answering``: the page shows no Stop and a
  Send is not queued); a Send (``making_way``) discards a title still generating through the one cancel path
  (source ``user``, nothing kept) before it takes the lock, and no title starts while it waits; the title is asked
  again after the next answer. A title another instance makes is cancelled through ``Peers`` by its owner.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from engine.peers import LiveElsewhere, Peers
from engine.read_side import ReadSide
from engine.runtimes import Runtime, Runtimes
from engine.settings import EngineSettings
from engine.stamps import new_id
from engine.worker import AttemptWorker, Workplace
from ledger.errors import LedgerError
from ledger.events import Started
from ledger.title_events import Titled
from ledger.titles import clean_title, wants_title

log = logging.getLogger("ledger_chat.engine")


class Titler:
    def __init__(
        self, read: ReadSide, settings: EngineSettings, runtimes: Runtimes, peers: Callable[[], Peers],
        inner: Callable[[AttemptWorker], None],
    ) -> None:  # fmt: skip
        self.read, self.settings, self.runtimes, self.peers, self.inner = read, settings, runtimes, peers, inner
        self.place: Workplace | None = None  # the engine's, set once it is made
        self._replaces: dict[str, str] = {}  # title attempt id -> the chat's title when it started
        self._making_way: dict[str, int] = {}  # conversation id -> answers waiting to start in it

    def ended(self, worker: AttemptWorker) -> None:
        """An attempt ended, under its conversation's lock (see the module's guarantees)."""
        self.inner(worker)
        run = worker.run
        replaces = self._replaces.pop(run.attempt_id, None)
        conv = self.read.conversation(run.conversation_id) if not run.lost else None
        if conv is None:
            return
        if run.purpose == "title":
            attempt = conv.attempts.get(run.attempt_id)
            title = clean_title(attempt.text) if attempt is not None and attempt.status == "complete" else ""
            if title and replaces is not None and conv.title == replaces:
                titled = Titled(conversation_id=run.conversation_id, title=title, replaces=replaces,
                                from_attempt=run.attempt_id)  # fmt: skip
                try:
                    self.read.append(titled)
                except LedgerError as exc:  # saving fails: the title is not applied, nothing else is lost
                    log.warning("the title of %s was not saved: %s", run.conversation_id, exc)
        elif self.settings.titles and run.purpose == "answer" and not conv.queue and wants_title(conv, run.attempt_id):
            self.settings.spawn(self._start(run.conversation_id, run.attempt_id), f"title {run.conversation_id}")

    @asynccontextmanager
    async def making_way(self, cid: str) -> AsyncIterator[None]:
        """Around an answer's start (before it takes the lock): no title starts meanwhile, and one generating is
        discarded first (the one cancel path; it awaits the title's end)."""
        self._making_way[cid] = self._making_way.get(cid, 0) + 1
        try:
            worker = self.runtimes.active(cid)
            if worker is not None and worker.run.purpose == "title":
                await worker.cancel("user", keep_partial=False, attempt_id=worker.run.attempt_id)
            elif worker is None and (elsewhere := self._title_elsewhere(cid)) is not None:  # its owner cancels it
                await self.peers().cancel(cid, elsewhere, "user", False)
            yield
        finally:
            self._making_way[cid] -= 1
            if not self._making_way[cid]:
                del self._making_way[cid]

    async def _start(self, cid: str, after: str) -> None:
        rt = self.runtimes.get(cid)
        if rt is None:
            return
        try:
            async with rt.lock:
                await self._start_locked(rt, cid, after)
        except LedgerError as exc:  # the claim was refused, or saving fails: the chat keeps its title
            log.warning("no title for %s: %s", cid, exc)

    async def _start_locked(self, rt: Runtime, cid: str, after: str) -> None:
        conv = self.read.conversation(cid)
        if conv is None or not self._free(rt, cid) or conv.live_attempt() is not None or conv.queue:
            return
        answer = conv.attempts.get(after)
        provider = self.settings.provider_for(answer.model if answer is not None else None)
        if provider is None or not wants_title(conv, after) or self.place is None:
            return
        started = Started(
            conversation_id=cid, attempt_id=new_id("att"), message_id=new_id("msg"), user_message_id="",
            turn=conv.turn, model=provider.model, purpose="title", through=after,
        )  # fmt: skip
        peers = self.peers()
        await peers.claim(cid, started.attempt_id)
        if not self._free(rt, cid):  # a Send came while the claim was made: it goes first
            peers.unclaim(started.attempt_id)
            return
        self._replaces[started.attempt_id] = conv.title
        try:
            view = lambda: self.read.conversation(cid)  # noqa: E731
            rt.active = AttemptWorker.start(started, provider, view, rt.lock, self.place)
        except BaseException:
            peers.unclaim(started.attempt_id)
            self._replaces.pop(started.attempt_id, None)
            raise

    def _title_elsewhere(self, cid: str) -> LiveElsewhere | None:
        """A title being made in this chat by another instance (``engine.cluster``), as the ledger shows it."""
        conv = self.read.state.conversations.get(cid)
        live = [a for a in conv.attempts.values() if a.purpose == "title" and a.is_live] if conv is not None else []
        return LiveElsewhere(live[-1].attempt_id, conv.turn) if live and conv is not None else None

    def _free(self, rt: Runtime, cid: str) -> bool:
        return rt.active is None and cid not in self._making_way
