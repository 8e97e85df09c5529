"""The engine: the only writer of the ledger. Submit, the one cancel path, Retry, delete, recovery, shutdown.

Guarantees:
- Every event is stamped (ids, ``ts``) here, given its seq by the store, reduced into ``state`` and then handed
  to subscribers, in that order, on the event loop: ``state`` is always ``replay(store events)``.
- One cancel path (``cancel``) for every source. It records ``cancel_requested`` (so later chunks are stale),
  cancels the stream task and awaits it (the task closes the HTTP stream in its ``finally`` and records
  ``upstream_closed``), then finalizes. A per-conversation lock serializes cancel and finalize; a cancel issued
  for an older turn does nothing.
- Each running attempt is owned by an ``AttemptRun`` that appends through the narrow ``_append`` callable it is
  given; its chunk gate applies the ledger's one stale rule (``ledger.stale``).
- Deleting awaits a discard-cancel first; afterwards the store refuses any write for that conversation.
- Several instances on one database (``engine.cluster``): events another instance stored are folded by ``absorb``
  (the same ``_fold`` as this engine's own appends, in seq order, never appended again); a cancel for an attempt
  another instance runs goes to its owner (``elsewhere``), with the attempt id and turn, so it never touches a
  newer one; Send, Retry and delete first wait briefly until this instance may write the conversation.
- While the store cannot save (``health().saving_fails``), nothing new is started: creating a conversation,
  Send and Retry raise ``InputRejected`` with the reason; what is already running goes on, kept in memory.
- Lazy history: start-up reads no conversation (the store's index gives ``summaries``); ``state`` holds the
  conversations that are loaded, each equal to ``replay`` of its stored events. ``conversation(cid)`` loads on
  demand (rename, delete and recovery read a file on the loop), ``await load(cid)`` loads in a worker thread (what
  pages use); a conversation is dropped from memory (``state`` and store) when its last viewer leaves and nothing
  streams in it, and after a rename or recovery no page asked for. PostgreSQL keeps every event in memory and
  drops nothing (``PgStore.forget`` refuses). Deleted
  conversations are only a tombstone in the store. Search and export read unloaded conversations without
  keeping them (``read_conversations``; ``search_async`` in a worker thread).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field, replace
from typing import Protocol

from immutables import Map

from engine.attempt import AttemptRun, Broken
from engine.branching import branch_events
from engine.failures import classify
from engine.finalize import finalize, recover
from engine.offline import start_import
from engine.provider import ProviderConfig
from engine.settings import EngineSettings
from engine.stamps import new_id, now_iso
from engine.text import valid_text, visible_title
from engine.tools.hub import ServerHealth, ToolHub
from engine.turn import run_turn
from ledger.errors import StateError, UnknownConversationError
from ledger.events import (
    AnyEvent,
    Attached,
    Branched,
    CancelRequested,
    CancelSource,
    Created,
    Deleted,
    Detached,
    Renamed,
    Retrying,
    Selected,
    Started,
    Submitted,
    Trigger,
    VersionSelected,
)
from ledger.history import as_messages, model_history
from ledger.listing import Listing
from ledger.reducer import reduce, replay
from ledger.search import Hit, match, title_hit
from ledger.state import EMPTY_STATE, AttemptState, ConversationState, State
from ledger.summary import ConversationSummary, newest_first
from ledger.tree import chain_before, selected_path, tip
from store.api import EventStore
from store.health import StoreHealth

log = logging.getLogger("ledger_chat.engine")
Listener = Callable[[AnyEvent], None]


class Elsewhere(Protocol):
    """Other app instances on the same database (``engine.cluster``): where an attempt this engine does not run
    is cancelled, by its owner. ``cancel`` returns once the attempt ended (False if it could not be reached)."""

    async def cancel(self, cid: str, attempt_id: str, turn: int, source: CancelSource, keep_partial: bool) -> bool: ...

    async def writable(self, cid: str) -> None:
        """Wait (briefly) until this instance may write the conversation: another may still be writing its end."""


class InputRejected(StateError):
    """The user's input cannot be sent as it is; the message says why (the text is not lost)."""


@dataclass(slots=True)
class Runtime:
    """Per conversation: the lock that serializes cancel/finalize, the running attempt, the viewers."""

    conversation_id: str
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    active: AttemptRun | None = None
    viewers: set[str] = field(default_factory=set)


class Engine:
    def __init__(self, store: EventStore, settings: EngineSettings, tools: ToolHub | None = None) -> None:
        start_import()  # 4-7 s once per process, on a thread: a turn awaits it before its timeouts start
        self.store = store
        self.settings = settings
        self.tools = tools
        self.state: State = EMPTY_STATE  # the loaded conversations only
        self._runtimes: dict[str, Runtime] = {}
        self._listeners: list[Listener] = []
        self._listing = Listing()  # the conversation list in order, updated per changed conversation
        self.elsewhere: Elsewhere | None = None  # set by engine.cluster when several instances share the store

    # --- reading and subscribing -------------------------------------------------------------------------------

    def conversation(self, cid: str) -> ConversationState | None:
        """The conversation's state, read from the store first if it is not loaded (``load`` does that off the
        event loop); None when it does not exist or was deleted."""
        conv = self.state.conversations.get(cid)
        if conv is None and not self.store.is_deleted(cid):
            conv = self._install(cid, self._read(cid, keep=True))
        return None if conv is None or conv.deleted else conv

    async def load(self, cid: str) -> ConversationState | None:
        """``conversation(cid)``, with the file read and replayed in a worker thread."""
        if cid not in self.state.conversations and not self.store.is_deleted(cid):
            conv = await asyncio.to_thread(self._read, cid, True)
            if conv is None:  # the store does not know it (a mistyped or stale link), unless created meanwhile
                known = self.state.conversations.get(cid)
                return None if known is None or known.deleted else known
            summary = self.store.summary(cid)  # not the events: making them again on the loop costs their length
            if summary is not None and summary.last_seq != conv.last_seq:  # events came in meanwhile (another instance)
                conv = replay(self.store.events(cid)).conversations.get(cid)
            if cid not in self.state.conversations:
                self._install(cid, conv)
        return self.conversation(cid)

    def is_loaded(self, cid: str) -> bool:
        return cid in self.state.conversations

    def drop(self, cid: str) -> bool:
        """Forget a conversation no page shows and nothing streams in (it is read again when opened)."""
        rt = self._runtimes.get(cid)
        if rt is not None and (rt.viewers or rt.active is not None or rt.lock.locked()):
            return False
        if not self.store.forget(cid):
            return False
        self.state = State(conversations=self.state.conversations.delete(cid)) if self.is_loaded(cid) else self.state
        self._runtimes.pop(cid, None)
        return True

    def read_conversations(self, state: State | None = None) -> Iterator[ConversationState]:
        """Every live conversation, newest first, one at a time: loaded ones from ``state``, the others read from
        the store without being kept (safe in a worker thread given a ``state`` snapshot)."""
        state = state or self.state
        for summary in newest_first(self.store.summaries()):
            conv = state.conversations.get(summary.conversation_id) or self._read(summary.conversation_id, False)
            if conv is not None and not conv.deleted:
                yield conv

    def summaries(self, query: str = "") -> list[ConversationSummary]:
        """The conversation list: live conversations whose title has every word of ``query``, newest first (from
        the store's index: no conversation is read)."""
        listing = self._listing.newest_first(self.store)
        words = query.casefold().split()
        if not words:
            return listing
        titles = self._listing.titles()
        return [listing[n] for n, title in enumerate(titles) if all(w in title for w in words)]

    def search(self, query: str, limit: int = 20) -> list[Hit]:
        """Chats whose title, or a line of a message shown, has every word of ``query`` (newest first): every
        title (from the index) and the messages of loaded conversations; never reads a file (``search_async``
        reads the others too)."""
        return self._search(query, limit, self.summaries(), self.state, None)

    async def search_async(
        self, query: str, limit: int = 20, still_wanted: Callable[[], bool] = lambda: True
    ) -> list[Hit]:
        """``search`` over the messages of every conversation: those not loaded are read in a worker thread, one
        at a time and not kept, newest first, until ``limit`` hits or ``still_wanted()`` turns False."""
        state = self.state
        summaries = self.summaries()
        return await asyncio.to_thread(self._search, query, limit, summaries, state, still_wanted)

    def _search(
        self,
        query: str,
        limit: int,
        summaries: list[ConversationSummary],
        state: State,
        still_wanted: Callable[[], bool] | None,
    ) -> list[Hit]:
        words = query.lower().split()
        hits: list[Hit] = []
        for summary in summaries if words else ():
            cid = summary.conversation_id
            hit = title_hit(cid, summary.title, words)
            if hit is None and cid in state.conversations:
                hit = match(state.conversations[cid], words)
            elif hit is None and still_wanted is not None:
                if not still_wanted():
                    break
                if self.store.might_contain(cid, words):
                    conv = self._read(cid, keep=False)
                    hit = match(conv, words) if conv is not None else None
            if hit is not None:
                hits.append(hit)
                if len(hits) >= limit:
                    break
        return hits

    def is_streaming(self, cid: str) -> bool:
        """Whether an answer streams in this conversation, here or on another instance."""
        rt = self._runtimes.get(cid)
        return bool(rt and rt.active) or self._live_elsewhere(cid) is not None

    def streaming_here(self) -> list[str]:
        """The conversations in which this instance streams an answer now (never another instance's)."""
        return [cid for cid, rt in self._runtimes.items() if rt.active is not None]

    def active_run(self, cid: str) -> AttemptRun | None:
        """The attempt running in this conversation, if any."""
        rt = self._runtimes.get(cid)
        return rt.active if rt else None

    def events(self, cid: str) -> tuple[AnyEvent, ...]:
        """The conversation's ledger, in seq order (for the audit panel and export); reading it keeps nothing in
        memory that was not loaded."""
        return self.store.events(cid, keep=self.is_loaded(cid))

    async def exported(self, cid: str) -> tuple[AnyEvent, ...] | None:
        """The ledger of a live conversation, read in a worker thread without loading it; None if there is none."""
        if self.store.is_deleted(cid) or (cid not in self.state.conversations and self.store.summary(cid) is None):
            return None
        try:
            return await asyncio.to_thread(self.events, cid)
        except UnknownConversationError:
            return None

    def tool_health(self) -> tuple[ServerHealth, ...]:
        """The configured tool servers: their state, tools and any problem, in words a person can read."""
        return self.tools.health() if self.tools is not None else ()

    def decide_tool(self, cid: str, call_id: str, run_it: bool) -> None:
        """The user's Run (``run_it``) or Skip for a tool call that waits for approval."""
        run = self.active_run(cid)
        future = run.approvals.get(call_id) if run is not None else None
        if future is None or future.done():
            raise InputRejected("That tool call is no longer waiting for a decision.")
        future.set_result(run_it)

    async def flush(self) -> bool:
        """Wait until everything appended so far is on disk; False if saving failed meanwhile."""
        return await self.store.flush()

    def health(self) -> StoreHealth:
        """Whether saving works (and why not), and every problem found in the data folder; read live."""
        return self.store.health()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    # --- operations --------------------------------------------------------------------------------------------

    def create_conversation(self, title: str = "") -> str:
        self._require_saving()
        cid = new_id("conv")
        self._append(Created(conversation_id=cid, title=title.strip()))
        return cid

    def rename(self, cid: str, title: str) -> None:
        title = visible_title(title)
        if not title:
            raise InputRejected("A conversation needs a name.")
        self._require(cid)
        self._append(Renamed(conversation_id=cid, title=valid_text(title[:120])))
        self._release(cid)  # renamed from the list: not kept in memory unless a page shows it

    async def submit(self, cid: str, text: str, model: str | None = None) -> tuple[str, str]:
        """Send a user message after the shown path's last answer (answered by ``model``, default the app's);
        returns (user message id, answer id). Raises ``InputRejected`` (the caller keeps the text)."""
        return await self._send(cid, text, edit_of=None, model=model)

    async def edit(self, cid: str, message_id: str, text: str, model: str | None = None) -> tuple[str, str]:
        """A new version of a sent user message, with a new answer; what followed the old version stays in its
        branch. A streaming answer is stopped first (the one cancel path). Returns (user id, answer id)."""
        message = self._require(cid).messages.get(message_id)
        if message is None or message.role != "user":
            raise InputRejected("Only your own messages can be edited.")
        self._check_text(text)
        self._provider(model)
        await self.cancel(cid, "user")
        return await self._send(cid, text, edit_of=message_id, model=model)

    async def retry(self, cid: str, message_id: str | None = None, model: str | None = None) -> str:
        """A new attempt for an answer (default: the last one shown), stopping a streaming answer first; later
        turns stay with the old attempt, in their branch. Returns the new attempt's id."""
        conv = self._require(cid)
        answers = [m for m in selected_path(conv) if conv.messages[m].role == "assistant"]
        target = message_id or (answers[-1] if answers else None)
        if target is None or target not in conv.messages or conv.messages[target].role != "assistant":
            raise InputRejected("There is no answer to retry.")
        self._provider(model)
        self._require_saving()
        await self.cancel(cid, "user")
        await self._writable(cid)
        rt = self._runtime(cid)
        async with rt.lock:
            conv = self._require(cid)
            if rt.active is not None or self._live_elsewhere(cid) is not None:
                raise InputRejected("An answer is still streaming. Stop it first.")
            message = conv.messages[target]
            attempt_id = new_id("att")
            self._append(
                Retrying(
                    conversation_id=cid,
                    message_id=message.message_id,
                    previous_attempt_id=message.selected_attempt_id or message.attempt_ids[-1],
                    attempt_id=attempt_id,
                    why="user",
                )
            )
            self._start(rt, message.turn, message.message_id, message.user_message_id or "", "retry", attempt_id, model)
        return attempt_id

    def select_version(self, cid: str, message_id: str) -> None:
        """Follow another version (the original or an edit) of a user message."""
        conv = self._require(cid)
        message = conv.messages.get(message_id)
        if message is None or message.role != "user":
            raise InputRejected("That message does not exist.")
        if conv.live_attempt() is not None:
            raise InputRejected("Wait for the answer to finish (or stop it) before switching versions.")
        if conv.chosen.get(message.parent or "") != message_id:
            self._append(VersionSelected(conversation_id=cid, message_id=message_id))

    def branch(self, cid: str, message_id: str) -> tuple[str, str | None]:
        """A new chat whose history is the shown branch up to and including ``message_id`` (from a user message:
        up to its parent, with its text returned as a draft to edit). Returns (new conversation id, draft)."""
        conv = self._require(cid)
        message = conv.messages.get(message_id)
        if message is None:
            raise InputRejected("That message does not exist.")
        chain = chain_before(conv, message_id)
        if message.role == "assistant":
            chain.append((message_id, message.selected_attempt_id))
        if any(attempt_id and conv.attempts[attempt_id].is_live for _, attempt_id in chain):
            raise InputRejected("Wait for the answer to finish (or stop it) before branching from it.")
        self._require_saving()
        new_cid = new_id("conv")
        title = f"{conv.title or 'Conversation'} (branch)"[:120]
        for event in branch_events(conv, chain, new_cid, at=message_id, title=title):
            self._append(event)
        self._append(Branched(conversation_id=cid, message_id=message_id, new_conversation_id=new_cid))
        return new_cid, message.text if message.role == "user" else None

    def select_attempt(self, cid: str, message_id: str, attempt_id: str) -> None:
        conv = self._require(cid)
        message = conv.messages.get(message_id)
        if message is None or attempt_id not in message.attempt_ids:
            raise InputRejected("That attempt does not exist.")
        if conv.live_attempt() is not None:  # switching could hide the streaming answer from the path shown
            raise InputRejected("Wait for the answer to finish (or stop it) before switching attempts.")
        if message.selected_attempt_id != attempt_id:
            self._append(Selected(conversation_id=cid, message_id=message_id, attempt_id=attempt_id))

    async def cancel(
        self,
        cid: str,
        source: CancelSource,
        *,
        keep_partial: bool = True,
        turn: int | None = None,
        attempt_id: str | None = None,
        requested_by: str | None = None,
    ) -> bool:
        """The one cancel path. Returns whether an attempt was cancelled. It runs to its end even when the caller is
        cancelled meanwhile (the caller then gets its CancelledError): a cancel never stops half-way. An attempt
        another instance runs is cancelled by its owner (``elsewhere``); ``requested_by`` names the instance that
        asked, when this engine is that owner."""
        return await asyncio.shield(self._cancel(cid, source, keep_partial, turn, attempt_id, requested_by))

    async def _cancel(
        self,
        cid: str,
        source: CancelSource,
        keep_partial: bool,
        turn: int | None,
        attempt_id: str | None,
        requested_by: str | None = None,
    ) -> bool:
        rt = self._runtimes.get(cid)
        if rt is None or rt.active is None:
            return await self._cancel_elsewhere(cid, source, keep_partial, turn, attempt_id)
        async with rt.lock:
            active = rt.active
            if active is None or active.settled or (turn is not None and turn != active.turn):
                return False
            if attempt_id is not None and attempt_id != active.attempt_id:
                return False  # a Stop meant for the attempt a tab showed never stops a newer one (a retry elsewhere)
            active.order_cancel(source, keep_partial)
            self._append(
                CancelRequested(
                    conversation_id=cid,
                    attempt_id=active.attempt_id,
                    source=source,
                    keep_partial=keep_partial,
                    turn=active.turn,
                    requested_by=requested_by,
                )
            )
            task = active.task
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            try:
                finalize(active)
            finally:
                rt.active = None  # even a failed finalization never leaves the chat "streaming" forever
            return True

    async def delete(self, cid: str) -> None:
        """Discard-cancel any stream, then delete: nothing is written to this conversation afterwards."""
        self._require(cid)
        await self.cancel(cid, "delete", keep_partial=False)
        await self._writable(cid)
        rt = self._runtime(cid)
        async with rt.lock:
            if self.conversation(cid) is None:
                return
            self._append(Deleted(conversation_id=cid))
            self._runtimes.pop(cid, None)
        await self.store.flush()  # False while saving fails: the deletion stays in memory, retried, on the banner

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
        recovered = recover(
            lambda: State(Map({c: v for c, v in self.state.conversations.items() if c in mine})), self._append
        )
        for cid in mine:
            self._release(cid)
        return recovered

    # --- viewers: leaving and coming back (docs/architecture.md) ------------------------------------------------

    async def viewer_joined(self, cid: str, viewer: str) -> None:
        rt = self._runtime(cid)
        was_empty = not rt.viewers
        rt.viewers.add(viewer)
        conv = self.conversation(cid)
        if was_empty and rt.active is not None and conv is not None and conv.detached:
            self._append(Attached(conversation_id=cid, attempt_id=rt.active.attempt_id))

    async def viewer_left(self, cid: str, viewer: str, source: CancelSource = "navigation") -> None:
        rt = self._runtimes.get(cid)
        if rt is None or viewer not in rt.viewers:
            return
        rt.viewers.discard(viewer)
        if not rt.viewers and rt.active is None:
            await self._left_elsewhere(cid, source)
            await self._drop_when_saved(cid)
            return
        if rt.viewers or rt.active is None or self.conversation(cid) is None:
            return
        self._append(Detached(conversation_id=cid, attempt_id=rt.active.attempt_id))
        if self.settings.limits.leave_policy == "cancel":
            await self.cancel(cid, source, turn=rt.active.turn)

    # --- internals ---------------------------------------------------------------------------------------------

    async def _send(self, cid: str, text: str, *, edit_of: str | None, model: str | None) -> tuple[str, str]:
        self._check_text(text)
        self._provider(model)
        self._require_saving()
        if self._live_elsewhere(cid) is None:
            await self._writable(cid)
        rt = self._runtime(cid)
        async with rt.lock:
            conv = self._require(cid)
            if rt.active is not None or self._live_elsewhere(cid) is not None:
                raise InputRejected("An answer is still streaming. Stop it first.")
            edited = conv.messages.get(edit_of or "")
            parent = edited.parent if edited is not None else tip(conv)
            turn = conv.turn + 1
            user_id, message_id = new_id("msg"), new_id("msg")
            self._append(
                Submitted(
                    conversation_id=cid,
                    message_id=user_id,
                    turn=turn,
                    text=valid_text(text),
                    parent=parent,
                    edit_of=edit_of,
                )
            )
            self._start(rt, turn, message_id, user_id, "submit", model=model)
        return user_id, message_id

    def _check_text(self, text: str) -> None:
        if not text.strip():
            raise InputRejected("Type a message first.")
        limit = self.settings.limits.max_input_chars
        if len(text) > limit:
            raise InputRejected(
                f"This message has {len(text):,} characters; the limit is {limit:,}. Shorten it and send again."
            )

    def _provider(self, model: str | None) -> ProviderConfig:
        provider = self.settings.provider_for(model)
        if provider is None:
            raise InputRejected(f"The model {model!r} is not one this app offers.")
        return provider

    def _start(
        self,
        rt: Runtime,
        turn: int,
        message_id: str,
        user_id: str,
        trigger: Trigger,
        attempt_id: str | None = None,
        model: str | None = None,
    ) -> None:
        """Record ``started`` and spawn the stream task of a new ``AttemptRun`` (under the conversation's lock)."""
        cid = rt.conversation_id
        attempt_id = attempt_id or new_id("att")
        provider = self._provider(model)
        self._append(
            Started(
                conversation_id=cid,
                attempt_id=attempt_id,
                message_id=message_id,
                user_message_id=user_id,
                turn=turn,
                model=provider.model,
                trigger=trigger,
            )
        )
        history = model_history(
            self.state.conversations[cid],
            until_message_id=message_id,
            tool_result_chars=self.settings.limits.tool_result_chars,
        )
        run = AttemptRun(
            conversation_id=cid,
            turn=turn,
            message_id=message_id,
            user_message_id=user_id,
            attempt_id=attempt_id,
            model=provider.model,
            provider=provider,
            messages=as_messages(history),
            context_ids=tuple(e.message_id for e in history),
            append=self._append,
            view=lambda: self.conversation(cid),
        )
        rt.active = run
        run.task = self.settings.spawn(self._run(rt, run), f"attempt {attempt_id}")

    async def _run(self, rt: Runtime, run: AttemptRun) -> None:
        try:
            outcome = await run_turn(run, self.settings, self.tools)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a bug must end the attempt readably, not leave a spinner
            log.exception("stream task failed")
            outcome = Broken(classify(exc), run.request_id)
        if run.settled:
            return
        run.outcome = outcome
        async with rt.lock:
            if rt.active is run:
                try:
                    finalize(run)
                finally:
                    rt.active = None
        if not rt.viewers:
            await self._drop_when_saved(rt.conversation_id)  # it streamed on after its last page left

    def _release(self, cid: str) -> None:
        """A conversation read for an operation no page asked for is dropped again once saved (if no page shows it
        by then)."""
        rt = self._runtimes.get(cid)
        if rt is None or (not rt.viewers and rt.active is None):
            self.settings.spawn(self._drop_when_saved(cid), f"drop {cid}")

    async def _drop_when_saved(self, cid: str) -> None:
        """``drop`` the conversation, once what was appended to it is on disk."""
        if not self.drop(cid) and not self.is_streaming(cid) and await self.store.flush():
            rt = self._runtimes.get(cid)
            if rt is None or not rt.viewers:
                self.drop(cid)

    def _append(self, event: AnyEvent) -> AnyEvent:
        cid = event.conversation_id
        if cid not in self.state.conversations:
            self.conversation(cid)  # an append always folds into the whole conversation
        event = self.store.append(replace(event, ts=event.ts or now_iso()))
        self._fold_missing(event)
        return self._fold(event)

    def _fold(self, event: AnyEvent) -> AnyEvent:
        """Reduce a stored event (its seq assigned) into the state, if its conversation is loaded or new, and hand it
        to subscribers. A deleted conversation leaves the state (the store keeps its tombstone)."""
        cid = event.conversation_id
        self._listing.touch(cid)
        if cid in self.state.conversations or event.seq == 1:
            self.state = reduce(self.state, event)
            if isinstance(event, Deleted):
                self.state = State(conversations=self.state.conversations.delete(cid))
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # noqa: BLE001 - a broken viewer must not break the ledger
                log.exception("listener failed")
        return event

    # --- other instances on the same database (engine.cluster) -------------------------------------------------

    def absorb(self, events: list[AnyEvent]) -> None:
        """Fold events other instances stored (already in this store: never appended again), in seq order; those
        already folded are skipped, and any the store holds before them are folded first."""
        for event in events:
            conv = self.state.conversations.get(event.conversation_id)
            if conv is not None and event.seq <= conv.last_seq:
                continue
            self._fold_missing(event)
            self._fold(event)

    def _fold_missing(self, event: AnyEvent) -> None:
        """Events another instance stored just before ``event`` (caught up by this store) but not folded yet."""
        conv = self.state.conversations.get(event.conversation_id)
        if conv is None or conv.deleted or event.seq <= conv.last_seq + 1:
            return
        for missing in self.store.events(event.conversation_id):
            if conv.last_seq < missing.seq < event.seq:
                self._fold(missing)

    def _live_elsewhere(self, cid: str) -> AttemptState | None:
        """With other instances: the attempt streaming in this conversation that another instance runs."""
        conv = self.conversation(cid) if self.elsewhere is not None and not self.is_running_here(cid) else None
        return conv.live_attempt() if conv is not None else None

    async def _writable(self, cid: str) -> None:
        if self.elsewhere is not None and self.conversation(cid) is not None:
            await self.elsewhere.writable(cid)

    def is_running_here(self, cid: str) -> bool:
        return self.active_run(cid) is not None

    def viewer_count(self, cid: str) -> int:
        rt = self._runtimes.get(cid)
        return len(rt.viewers) if rt else 0

    async def _cancel_elsewhere(
        self, cid: str, source: CancelSource, keep_partial: bool, turn: int | None, attempt_id: str | None
    ) -> bool:
        conv, live = self.conversation(cid), self._live_elsewhere(cid)
        if self.elsewhere is None or conv is None or live is None:
            return False
        live_turn = conv.messages[live.message_id].turn
        if (turn is not None and turn != live_turn) or (attempt_id is not None and attempt_id != live.attempt_id):
            return False
        return await self.elsewhere.cancel(cid, live.attempt_id, live_turn, source, keep_partial)

    async def _left_elsewhere(self, cid: str, source: CancelSource) -> None:
        """The last viewer here left while another instance streams: the leave policy asks its owner."""
        conv, live = self.conversation(cid), self._live_elsewhere(cid)
        if live is not None and conv is not None and self.settings.limits.leave_policy == "cancel":
            await self.cancel(cid, source, turn=conv.messages[live.message_id].turn)

    def _read(self, cid: str, keep: bool) -> ConversationState | None:
        """The conversation replayed from its stored events (None when the store does not know it)."""
        try:
            events = self.store.events(cid, keep=keep)
        except UnknownConversationError:
            return None
        return replay(events).conversations.get(cid)

    def _install(self, cid: str, conv: ConversationState | None) -> ConversationState | None:
        """Make a conversation read from the store part of ``state`` (on the event loop)."""
        if conv is None or self.store.is_deleted(cid):
            return None
        self.state = State(conversations=self.state.conversations.set(cid, conv))
        return conv

    def _runtime(self, cid: str) -> Runtime:
        rt = self._runtimes.get(cid)
        if rt is None:
            rt = self._runtimes[cid] = Runtime(conversation_id=cid)
        return rt

    def _require_saving(self) -> None:
        reason = self.store.health().saving_fails
        if reason is not None:
            raise InputRejected(
                f"Saving fails: {reason}. Nothing new is sent until it works again, so that no answer is lost "
                "(your text stays in the box)."
            )

    def _require(self, cid: str) -> ConversationState:
        conv = self.conversation(cid)
        if conv is None:
            raise InputRejected("This conversation no longer exists.")
        return conv
