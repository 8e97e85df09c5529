"""The engine's commands: create, rename, Send, Edit, Retry, Continue, select, branch, Stop (the one cancel
path's front door), delete, viewers leaving and coming back, recovery and shutdown.

Guarantees:
- What a command may do and appends is decided by ``ledger.decide`` (refusals raise ``InputRejected``); the engine
  adds what the ledger cannot know: ids, the model and preset, whether saving works, whether an answer streams.
- Every event goes through the read side (``engine.read.side``): stamped, given its seq by the store, reduced into
  ``state``, handed to subscribers, in that order: ``state`` is always ``replay(store events)``.
- Each running attempt is owned by its ``AttemptWorker`` (``engine.turns.worker``) from ``started`` to ``persisted``.
  ``cancel`` hands every source to that owner's one cancel entry (a timeout comes in there by itself); a cancel for
  an older turn, or for another attempt than the one given, does nothing. Deleting awaits a discard-cancel first;
  afterwards the store refuses any write; its ``deleted`` keeps what it spent (``ledger.usage.usage_of``).
- Every attempt starts through the one door (``engine.attempts``: Send, Edit, Retry and a queued message by its
  ``begin``, a compaction first when the request would not fit the model's window), with the model and agent
  preset chosen (``engine.commands.presets``); what follows an end is the door's policies' (``engine.policies``: the
  queue, the chat's title, never making it busy and discarded by a Send). The engine is built from its parts by
  ``engine.commands.assembly.build_engine``; it holds them and fills nothing in later.
- Other instances on the same database are asked through the door's ``peers`` (``ALONE`` alone, the cluster
  wired in ``app``): an attempt is claimed there before its first event (a refused claim starts nothing);
  another instance's attempt is cancelled by its owner; Send, Retry, delete first wait until this one may write.
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
from dataclasses import dataclass, replace
from typing import Any

from immutables import Map

from engine.attempts import Attempts, Peers
from engine.commands.approval_route import decline_here, route_answer, route_reply
from engine.commands.branching import branch_events
from engine.commands.compacting import Compactor
from engine.commands.continuing import Continuing
from engine.commands.faces import CompactionFace, PresenceFace, ReadFace
from engine.commands.presence import Presence
from engine.commands.presets import Presets, new_attempt
from engine.commands.queue import Ids, MessageQueue
from engine.files import Attached, Files, admit, kept, referenced_by, unreferenced
from engine.people import acting
from engine.policies import Titles
from engine.provider import ProviderConfig
from engine.read import ReadSide
from engine.stamps import new_id
from engine.text import valid_text, visible_title
from engine.tools import ServerHealth, ToolHub
from engine.turns import AttemptRun, EngineSettings, recover
from ledger import decide
from ledger.bounds import is_over
from ledger.decide import InputRejected as InputRejected
from ledger.events import ApprovalScope, CancelSource, Created, Deleted
from ledger.state import ConversationState, State
from ledger.usage import usage_of
from store.api import EventStore
from store.blobs import keep_text

log = logging.getLogger("ledger_chat.engine")
Choice = tuple[str | None, str | None]  # (model, agent preset id) of a new attempt


@dataclass(frozen=True, slots=True)
class Parts:
    """What an engine is made of (``engine.commands.assembly.build_engine`` makes them, each from those before it)."""

    store: EventStore
    settings: EngineSettings
    tools: ToolHub | None
    read: ReadSide
    door: Attempts
    presets: Presets
    presence: Presence
    queued: MessageQueue
    compactor: Compactor
    continuing: Continuing
    titles: Titles


class Engine(ReadFace, PresenceFace, CompactionFace):
    def __init__(self, parts: Parts) -> None:
        self.store, self.settings, self.tools, self.read = parts.store, parts.settings, parts.tools, parts.read
        self.files: Files = parts.settings.files
        self.door, self.presets, self.presence, self.queued = parts.door, parts.presets, parts.presence, parts.queued
        self.compactor, self.continuing, self._titles = parts.compactor, parts.continuing, parts.titles

    @property
    def state(self) -> State:  # the loaded conversations (``ReadSide.state``)
        return self.read.state

    @property
    def peers(self) -> Peers:  # the other instances on the same database (``ALONE`` for one alone)
        return self.door.peers

    def conversation(self, cid: str) -> ConversationState | None:  # (``ReadSide.conversation``)
        return self.read.conversation(cid)

    def is_streaming(self, cid: str) -> bool:  # whether an answer streams in it, here or on another instance
        return self.door.answering(cid)  # (never a title: engine.policies.titles)

    def is_running_here(self, cid: str) -> bool:  # (its worker is ``self.door.runtimes.active(cid)``)
        return self.door.runtimes.active(cid) is not None

    def active_run(self, cid: str) -> AttemptRun | None:  # the record of the attempt running here, if any
        return worker.run if (worker := self.door.runtimes.active(cid)) is not None else None

    def streaming_here(self) -> list[str]:  # the conversations this instance streams an answer in now
        return self.door.runtimes.streaming_here()

    def viewer_count(self, cid: str) -> int:
        return self.door.runtimes.viewer_count(cid)

    def lost(self, cid: str, attempt_ids: Collection[str]) -> None:  # (``Presence.lost``: engine.peers.Local)
        self.presence.lost(cid, attempt_ids)

    def spawn(self, coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        return self.settings.spawn(coro, name)

    def tool_health(self) -> tuple[ServerHealth, ...]:  # the tool servers: state, tools, any problem, in words
        return self.tools.health() if self.tools is not None else ()

    def decide_tool(self, cid: str, call_id: str, run_it: bool, scope: ApprovalScope = "once") -> None:  # Run, Skip
        route_answer(self.door.runtimes.active(cid), self.peers, self.spawn, cid, (call_id, run_it, scope))

    def answer_question(self, cid: str, question_id: str, action: Any, content: Any) -> None:  # a tool's question
        asked = (question_id, action, content)  # checked here against the form's schema, answered where it runs
        route_reply(self.active_run(cid), self.peers, self.spawn, cid, asked, self.conversation(cid))

    def decline_question(self, cid: str, question_id: str, reason: str) -> None:  # nobody to ask (an editor)
        decline_here(self.active_run(cid), question_id, reason)

    # --- commands ----------------------------------------------------------------------------------------------
    def create_conversation(self, title: str = "", cid: str | None = None, cwd: str | None = None) -> str:
        self._require_saving()  # ``cwd``: an editor's session (``editor``) records the folder it works in
        cid = cid or new_id("conv")
        self.read.append(Created(conversation_id=cid, title=title.strip(), owner=acting(), cwd=cwd))
        return cid

    async def start_conversation(self, title: str = "", cwd: str | None = None) -> str:
        """``create_conversation``, taken for writing first, off the loop (no database answer: ``StoreError``)."""
        self._require_saving(await self.read.saving_fails())
        cid = new_id("conv")
        await self.peers.writable(cid)
        return self.create_conversation(title, cid, cwd)

    def rename(self, cid: str, title: str) -> None:
        self.read.append(decide.rename(self._require(cid).conversation_id, valid_text(visible_title(title))))
        self.presence.release(cid)  # renamed from the list: not kept in memory unless a page shows it

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
        rt = self.door.runtimes.of(cid)
        async with rt.lock:
            new = new_attempt(provider)
            retrying, started = decide.retry(self._require(cid), target, new, streaming=self.door.streams(rt))
            await self.door.begin(rt, retrying, started, provider)
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
        """The one cancel path, for every source (``Attempts.cancel``): the running attempt's owner cancels it,
        here or on the instance that runs it. Returns whether an attempt was cancelled; ``requested_by`` names the
        instance that asked."""
        by = requested_by
        return await self.door.cancel(cid, source, keep_partial=keep_partial, turn=turn, attempt_id=attempt_id,
                                      requested_by=by)  # fmt: skip

    async def delete(self, cid: str) -> None:
        """Discard-cancel any stream, then delete: nothing is written to this conversation afterwards."""
        blobs = referenced_by(self._require(cid))
        await self.cancel(cid, "delete", keep_partial=False)
        await self.peers.writable(cid)
        rt = self.door.runtimes.of(cid)
        async with rt.lock:
            if (conv := self.conversation(cid)) is None:
                return
            self.read.append(Deleted(conversation_id=cid, owner=conv.owner, usage=usage_of(conv)))  # spend stays
            self.door.runtimes.pop(cid)
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
        just those of these conversations (attempts whose owner died, ``app.cluster``)."""
        if only is None:
            only = [s.conversation_id for s in self.store.summaries() if s.open_attempts]
        mine = {cid for cid in only if not self.is_running_here(cid) and self.conversation(cid) is not None}

        def held() -> State:
            return State(Map({c: v for c, v in self.state.conversations.items() if c in mine}))

        recovered = recover(held, self.read.append)
        for cid in mine:
            self.presence.release(cid)
        return recovered

    # --- internals ---------------------------------------------------------------------------------------------
    async def _send(self, cid: str, text: str, *, edit_of: str | None, model: Choice, files: Attached) -> Ids:
        decide.check_text(text, self.settings.limits.max_input_chars, files=bool(files))
        provider = self._provider(model)
        await admit(self.files, self._require(cid), provider.model, files, until=edit_of)
        self._require_saving(await self.read.saving_fails())
        text, whole = valid_text(text), None  # over the bound (a raised --max-input-chars): a blob, the preview sent
        if is_over(text):
            text, whole = await asyncio.to_thread(keep_text, self.files.blobs, text)
        if self.door.elsewhere(cid) is None:
            await self.peers.writable(cid)
        rt = self.door.runtimes.of(cid)
        async with self._titles.making_way(self.door, cid), rt.lock:  # a title being made is discarded first
            conv, streaming = self._require(cid), self.door.streams(rt)
            user_id, answer_id, new = new_id("msg"), new_id("msg"), new_attempt(provider)
            submitted, started = decide.send(
                conv, text, new, user_id=user_id, answer_id=answer_id, edit_of=edit_of,
                streaming=streaming, attachments=files, actor=acting(),
            )  # fmt: skip
            await self.door.begin(rt, replace(submitted, whole=whole), started, provider)
        return user_id, answer_id

    def _provider(self, choice: Choice) -> ProviderConfig:  # (model, preset): ``Presets.provider`` says why not
        return self.presets.provider(choice[1], choice[0])

    def _require_saving(self, reason: str | None = "") -> None:
        require_saving(self.store, reason)

    def _require(self, cid: str) -> ConversationState:
        return decide.existing(self.conversation(cid))


def require_saving(store: EventStore, reason: str | None = "") -> None:
    """Refuse anything new while the store cannot save (``reason``; "": ask the store now), with a sentence."""
    reason = store.health().saving_fails if reason == "" else reason
    if reason is not None:
        raise InputRejected(
            f"Saving fails: {reason}. Nothing new is sent until it works again, so that no answer is lost "
            "(your text stays in the box)."
        )
