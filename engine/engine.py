"""The engine's commands: create, rename, Send, Edit, Retry, Continue, select, branch, Stop (the one cancel
path's front door), delete, viewers leaving and coming back, recovery and shutdown.

Guarantees:
- What a command may do and appends is decided by ``ledger.decide`` (refusals raise ``InputRejected``); the engine
  adds what the ledger cannot know: ids, the model and preset, whether saving works, whether an answer streams.
- Every event goes through the read side (``engine.read_side``): stamped, given its seq by the store, reduced into
  ``state``, handed to subscribers, in that order: ``state`` is always ``replay(store events)``.
- Each running attempt is owned by its ``AttemptWorker`` (``engine.worker``) from ``started`` to ``persisted``.
  ``cancel`` hands every source to that owner's one cancel entry (a timeout comes in there by itself); a cancel for
  an older turn, or for another attempt than the one given, does nothing. Deleting awaits a discard-cancel first;
  afterwards the store refuses any write for that conversation.
- Send, Edit, Retry and a queued message start through ``engine.compacting`` (a compaction first when the request
  would not fit the model's window), with the model and agent preset chosen (``engine.presets``); the model names
  a chat after its first answer (``engine.titling``: never making it busy, discarded by a Send).
- Other instances on the same database are asked through ``peers`` (``ALONE`` until ``engine.cluster`` joins): an
  attempt is claimed there before its first event (a refused claim starts nothing: ``engine.starting``); another
  instance's attempt is cancelled by its owner; Send, Retry, delete first wait until this one may write.
- While the store cannot save, nothing new is started (``InputRejected`` with the reason); what runs goes on.
- Send, Edit, Retry refuse files the model cannot take (``engine.files.admit``); deleting a chat deletes the blobs
  no other live chat names (``engine.files.collect``).
- A conversation leaves memory (``drop``) when its last viewer leaves and nothing streams in it, once an answer
  that ended by itself has nobody watching, and after a rename or recovery no page asked for (once saved).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection, Coroutine
from typing import Any

from immutables import Map

from engine.approval_route import route_answer, route_reply
from engine.attempt import AttemptRun, View
from engine.branching import branch_events
from engine.compacting import Compactor
from engine.continuing import Continuing
from engine.files.admit import Attached, admit, kept
from engine.files.collect import referenced_by, unreferenced
from engine.offline import start_import
from engine.peers import ALONE, LiveElsewhere, Peers
from engine.presence import Presence
from engine.presets import Presets, new_attempt
from engine.provider import ProviderConfig
from engine.queue import Ids, MessageQueue
from engine.read_side import ReadSide
from engine.runtimes import Runtime, Runtimes
from engine.settings import EngineSettings
from engine.stamps import new_id
from engine.starting import Starting
from engine.text import valid_text, visible_title
from engine.titling import Titler
from engine.tools.hub import ServerHealth, ToolHub
from engine.worker import Workplace, recover
from ledger import decide
from ledger.decide import InputRejected as InputRejected
from ledger.events import ApprovalScope, CancelSource, Created, Deleted
from ledger.state import ConversationState, State
from store.api import EventStore

log = logging.getLogger("ledger_chat.engine")
Choice = tuple[str | None, str | None]  # (model, agent preset id) of a new attempt


class Engine:
    def __init__(self, store: EventStore, settings: EngineSettings, tools: ToolHub | None = None) -> None:
        start_import()  # 4-7 s once per process, on a thread: a turn awaits it before its timeouts start
        self.store, self.settings, self.tools, self.files = store, settings, tools, settings.files
        self.peers: Peers = ALONE
        self.presets = Presets(settings.presets, settings.provider_for, lambda: settings.models, self.tool_health)
        self._runtimes = Runtimes()
        read = self.read = ReadSide(store)
        presence = self._presence = Presence(read, self._runtimes, settings, self._cancel_turn, self._elsewhere)
        self.queued = MessageQueue(self, self._runtimes, presence.ended)  # sent after an answer (engine.queue)
        t = self._titles = Titler(read, settings, self._runtimes, lambda: self.peers, self.queued.ended)
        self._place = self.queued.place = t.place = Workplace(read.append, settings, tools, t.ended)  # (titles)
        c = self._compactor = Compactor(read, settings, self._place, self._runtimes, lambda: self.peers)
        self.meter, self.compact = c.meter, c.compact  # the context meter, compaction
        self.compact_and_retry, self.retry_compaction = c.compact_and_retry, c.retry  # (engine.compacting)
        self.continue_answer = Continuing(c, self.presets, self._require_saving).start  # (engine.continuing)
        self.queued.begin = c.start  # a queued message is an answer like any: a compaction first when it must
        # what pages read is the read side's (engine.read_side); leaving, coming back, ``lost``: engine.presence's
        self.conversation, self.load, self.is_loaded = read.conversation, read.load, read.is_loaded
        self.loaded, self.read_conversations, self.summaries = read.loaded, read.read_conversations, read.summaries
        self.search, self.search_async, self.events = read.search, read.search_async, read.events
        self.exported, self.health, self.flush = read.exported, read.health, read.flush
        self.subscribe, self.absorb, self.drop = read.subscribe, read.absorb, presence.drop
        self.viewer_joined, self.viewer_left, self.lost = presence.viewer_joined, presence.viewer_left, presence.lost
        # the conversations this instance streams an answer in now (never another instance's); viewers per chat
        self.streaming_here, self.viewer_count = self._runtimes.streaming_here, self._runtimes.viewer_count

    @property
    def state(self) -> State:  # the loaded conversations (``ReadSide.state``)
        return self.read.state

    def is_streaming(self, cid: str) -> bool:  # whether an answer streams in it, here or on another instance
        return self._runtimes.answering(cid) or self._elsewhere(cid) is not None  # (never a title: engine.titling)

    def is_running_here(self, cid: str) -> bool:  # (its worker is ``self._runtimes.active(cid)``)
        return self._runtimes.active(cid) is not None

    def active_run(self, cid: str) -> AttemptRun | None:  # the record of the attempt running here, if any
        return worker.run if (worker := self._runtimes.active(cid)) is not None else None

    def join(self, peers: Peers) -> None:  # the other instances on the same database (``engine.cluster``)
        self.peers = peers

    def spawn(self, coro: Coroutine[Any, Any, None], name: str) -> None:
        self.settings.spawn(coro, name)

    def tool_health(self) -> tuple[ServerHealth, ...]:  # the tool servers: state, tools, any problem, in words
        return self.tools.health() if self.tools is not None else ()

    def decide_tool(self, cid: str, call_id: str, run_it: bool, scope: ApprovalScope = "once") -> None:  # Run, Skip
        route_answer(self._runtimes.active(cid), self.peers, self.spawn, cid, (call_id, run_it, scope))

    def answer_question(self, cid: str, question_id: str, action: Any, content: Any) -> None:  # a tool's question
        asked = (question_id, action, content)  # checked here against the form's schema, answered where it runs
        route_reply(self.active_run(cid), self.peers, self.spawn, cid, asked, self.conversation(cid))

    # --- commands ----------------------------------------------------------------------------------------------

    def create_conversation(self, title: str = "", cid: str | None = None) -> str:
        self._require_saving()
        cid = cid or new_id("conv")
        self.read.append(Created(conversation_id=cid, title=title.strip()))
        return cid

    async def start_conversation(self, title: str = "") -> str:
        """``create_conversation``, taken for writing first, off the loop (no database answer: ``StoreError``)."""
        self._require_saving(await self.read.saving_fails())
        cid = new_id("conv")
        await self.peers.writable(cid)
        return self.create_conversation(title, cid)

    def rename(self, cid: str, title: str) -> None:
        self.read.append(decide.rename(self._require(cid).conversation_id, valid_text(visible_title(title))))
        self._presence.release(cid)  # renamed from the list: not kept in memory unless a page shows it

    async def send(
        self, cid: str, text: str, model: str | None = None, attachments: Attached = (), preset: str | None = None
    ) -> Ids:
        """A user message after the shown path's last answer, answered with agent ``preset`` by ``model`` (default:
        the preset's, else the app's); (user id, answer id) or InputRejected."""
        return await self._send(cid, text, edit_of=None, model=(model, preset), files=attachments)

    submit = send

    async def edit(
        self, cid: str, message_id: str, text: str, model: str | None = None, attachments: Attached | None = None,
        preset: str | None = None,
    ) -> Ids:  # fmt: skip
        """A new version of a sent user message (``attachments`` None: the same files) with a new answer; what
        followed the old one stays in its branch; a streaming answer is stopped first."""
        decide.editable(conv := self._require(cid), message_id)
        files = kept(conv, message_id) if attachments is None else attachments
        decide.check_text(text, self.settings.limits.max_input_chars, files=bool(files))
        await admit(self.files, conv, self._provider((model, preset)).model, files, until=message_id)
        await self.cancel(cid, "user")
        return await self._send(cid, text, edit_of=message_id, model=(model, preset), files=files)

    async def retry(
        self, cid: str, message_id: str | None = None, model: str | None = None, preset: str | None = None
    ) -> str:
        """A new attempt for an answer (default: the last shown), a streaming one stopped first; its id."""
        target = decide.retry_target(self._require(cid), message_id)
        provider = self._provider((model, preset))
        await admit(self.files, self._require(cid), provider.model, (), until=target)
        self._require_saving(await self.read.saving_fails())
        await self.cancel(cid, "user")
        await self.peers.writable(cid)
        rt = self._runtimes.of(cid)
        async with rt.lock:
            new = new_attempt(provider)
            retrying, started = decide.retry(self._require(cid), target, new, streaming=self._streams(rt))
            await self._compactor.start(rt, retrying, started, Starting(provider, self._view(cid), self._place))
        return new.attempt_id

    def select_version(self, cid: str, message_id: str) -> None:  # follow another version of a user message
        for event in decide.select_version(self._require(cid), message_id):
            self.read.append(event)

    def select_attempt(self, cid: str, message_id: str, attempt_id: str) -> None:
        for event in decide.select_attempt(self._require(cid), message_id, attempt_id):
            self.read.append(event)

    def branch(self, cid: str, message_id: str) -> tuple[str, str | None]:
        """A new chat with the shown branch up to ``message_id`` (a user message: to its parent, its text a draft)."""
        conv, new_cid = self._require(cid), new_id("conv")
        plan = decide.branch(conv, message_id, new_cid)
        self._require_saving()
        for event in branch_events(conv, plan.chain, new_cid, at=message_id, title=plan.title):
            self.read.append(event)
        self.read.append(plan.branched)
        return new_cid, plan.draft

    async def cancel(
        self, cid: str, source: CancelSource, *, keep_partial: bool = True, turn: int | None = None,
        attempt_id: str | None = None, requested_by: str | None = None,
    ) -> bool:  # fmt: skip
        """The one cancel path, for every source: the running attempt's owner cancels it (``AttemptWorker.cancel``),
        here or, through ``peers``, on the instance that runs it. Returns whether an attempt was cancelled; runs to
        its end even when the caller is cancelled meanwhile. ``requested_by`` names the instance that asked."""

        worker = self._runtimes.active(cid)
        if worker is not None:  # decided in this step (no task in between), its own shield for the rest
            by = requested_by
            return await worker.cancel(source, keep_partial, turn=turn, attempt_id=attempt_id, requested_by=by)

        async def the_one_path() -> bool:
            live = self._elsewhere(cid)
            if live is None or turn not in (None, live.turn) or attempt_id not in (None, live.attempt_id):
                return False
            return await self.peers.cancel(cid, live, source, keep_partial)

        return await asyncio.shield(the_one_path())

    async def delete(self, cid: str) -> None:
        """Discard-cancel any stream, then delete: nothing is written to this conversation afterwards."""
        blobs = referenced_by(self._require(cid))
        await self.cancel(cid, "delete", keep_partial=False)
        await self.peers.writable(cid)
        rt = self._runtimes.of(cid)
        async with rt.lock:
            if self.conversation(cid) is None:
                return
            self.read.append(Deleted(conversation_id=cid))
            self._runtimes.pop(cid)
        await self.store.flush()  # False while saving fails: the deletion stays in memory, retried, on the banner
        if blobs:  # the files no other conversation names go too (engine.files.collect)
            await asyncio.to_thread(lambda: self.files.forget(unreferenced(self.store, cid, blobs)))

    async def shutdown(self) -> None:
        """Cancel every stream, keeping partials, and write everything to disk."""
        await asyncio.gather(*(self.cancel(cid, "shutdown") for cid in self.streaming_here()))
        if not await self.store.flush():
            log.error("shutting down with %d event(s) not yet saved", self.store.health().unsaved)

    def recover(self, only: Collection[str] | None = None) -> list[str]:
        """Finalize, as interrupted (source restart), every attempt a dead process left streaming: at start-up those
        of the conversations the store's index marks as having an open attempt (only those are read); ``only``:
        just those of these conversations (attempts whose owner died, ``engine.cluster``)."""
        if only is None:
            only = [s.conversation_id for s in self.store.summaries() if s.open_attempts]
        mine = {cid for cid in only if not self.is_running_here(cid) and self.conversation(cid) is not None}

        def held() -> State:
            return State(Map({c: v for c, v in self.state.conversations.items() if c in mine}))

        recovered = recover(held, self.read.append)
        for cid in mine:
            self._presence.release(cid)
        return recovered

    # --- internals ---------------------------------------------------------------------------------------------
    async def _send(self, cid: str, text: str, *, edit_of: str | None, model: Choice, files: Attached) -> Ids:
        decide.check_text(text, self.settings.limits.max_input_chars, files=bool(files))
        provider = self._provider(model)
        await admit(self.files, self._require(cid), provider.model, files, until=edit_of)
        self._require_saving(await self.read.saving_fails())
        if self._elsewhere(cid) is None:
            await self.peers.writable(cid)
        rt = self._runtimes.of(cid)
        async with self._titles.making_way(cid), rt.lock:  # a title being made is discarded first
            conv, streaming = self._require(cid), self._streams(rt)
            user_id, answer_id, new = new_id("msg"), new_id("msg"), new_attempt(provider)
            submitted, started = decide.send(
                conv, valid_text(text), new, user_id=user_id, answer_id=answer_id, edit_of=edit_of,
                streaming=streaming, attachments=files,
            )  # fmt: skip
            await self._compactor.start(rt, submitted, started, Starting(provider, self._view(cid), self._place))
        return user_id, answer_id

    async def _cancel_turn(self, cid: str, source: CancelSource, turn: int) -> bool:
        return await self.cancel(cid, source, turn=turn)

    def _elsewhere(self, cid: str) -> LiveElsewhere | None:  # another instance's attempt here (none if one runs here)
        return None if self.is_running_here(cid) else self.peers.streaming(cid)

    def _streams(self, rt: Runtime) -> bool:
        return rt.active is not None or self._elsewhere(rt.conversation_id) is not None

    def _view(self, cid: str) -> View:
        return lambda: self.conversation(cid)

    def _provider(self, choice: Choice) -> ProviderConfig:  # (model, preset): ``Presets.provider`` says why not
        return self.presets.provider(choice[1], choice[0])

    def _require_saving(self, reason: str | None = "") -> None:
        reason = self.store.health().saving_fails if reason == "" else reason  # "": ask the store now
        if reason is not None:
            raise InputRejected(
                f"Saving fails: {reason}. Nothing new is sent until it works again, so that no answer is lost "
                "(your text stays in the box)."
            )

    def _require(self, cid: str) -> ConversationState:
        return decide.existing(self.conversation(cid))
