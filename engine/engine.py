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
- While the store cannot save (``health().saving_fails``), nothing new is started: creating a conversation,
  Send and Retry raise ``InputRejected`` with the reason; what is already running goes on, kept in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from engine.attempt import AttemptRun, Broken
from engine.branching import branch_events
from engine.failures import classify
from engine.finalize import finalize, recover
from engine.offline import start_import
from engine.provider import ProviderConfig
from engine.settings import EngineSettings
from engine.stamps import new_id, now_iso
from engine.text import valid_text, visible_title
from engine.tools import ServerHealth, ToolHub
from engine.turn import run_turn
from ledger.errors import StateError
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
from ledger.health import StoreHealth
from ledger.history import as_messages, model_history
from ledger.reducer import reduce, replay
from ledger.search import Hit, search
from ledger.state import ConversationState, State
from ledger.store_api import EventStore
from ledger.summary import ConversationSummary, newest_first, summary_of
from ledger.tree import chain_before, selected_path, tip

log = logging.getLogger("ledger_chat.engine")
Listener = Callable[[AnyEvent], None]


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
        self.state: State = replay(store.all_events())
        self._runtimes: dict[str, Runtime] = {}
        self._listeners: list[Listener] = []

    # --- reading and subscribing -------------------------------------------------------------------------------

    def conversation(self, cid: str) -> ConversationState | None:
        conv = self.state.conversations.get(cid)
        return None if conv is None or conv.deleted else conv

    def conversations(self) -> list[ConversationState]:
        """Live conversations, newest activity first."""
        convs = [c for c in self.state.conversations.values() if not c.deleted]
        return sorted(convs, key=lambda c: (c.updated_ts, c.created_ts), reverse=True)

    def summaries(self, query: str = "") -> list[ConversationSummary]:
        """The conversation list: live conversations whose title has every word of ``query``, newest first."""
        words = query.casefold().split()
        found = (summary_of(c) for c in self.state.conversations.values() if not c.deleted)
        return newest_first(s for s in found if all(w in s.title.casefold() for w in words))

    def search(self, query: str, limit: int = 20) -> list[Hit]:
        """Chats whose title, or a line of a message shown, has every word of ``query`` (newest first)."""
        return search(self.conversations(), query, limit)

    def is_streaming(self, cid: str) -> bool:
        rt = self._runtimes.get(cid)
        return bool(rt and rt.active)

    def active_run(self, cid: str) -> AttemptRun | None:
        """The attempt running in this conversation, if any."""
        rt = self._runtimes.get(cid)
        return rt.active if rt else None

    def events(self, cid: str) -> tuple[AnyEvent, ...]:
        """The conversation's ledger, in seq order (for the audit panel and export)."""
        return self.store.events(cid)

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
        rt = self._runtime(cid)
        async with rt.lock:
            conv = self._require(cid)
            if rt.active is not None:
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
    ) -> bool:
        """The one cancel path. Returns whether an attempt was cancelled. It runs to its end even when the caller is
        cancelled meanwhile (the caller then gets its CancelledError): a cancel never stops half-way."""
        return await asyncio.shield(self._cancel(cid, source, keep_partial, turn, attempt_id))

    async def _cancel(
        self, cid: str, source: CancelSource, keep_partial: bool, turn: int | None, attempt_id: str | None
    ) -> bool:
        rt = self._runtimes.get(cid)
        if rt is None:
            return False
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
        rt = self._runtime(cid)
        async with rt.lock:
            if self.conversation(cid) is None:
                return
            self._append(Deleted(conversation_id=cid))
            self._runtimes.pop(cid, None)
        await self.store.flush()  # False while saving fails: the deletion stays in memory, retried, on the banner

    async def shutdown(self) -> None:
        """Cancel every stream, keeping partials, and write everything to disk."""
        await asyncio.gather(*(self.cancel(cid, "shutdown") for cid in list(self._runtimes)))
        if not await self.store.flush():
            log.error("shutting down with %d event(s) not yet saved", self.store.health().unsaved)

    def recover(self) -> list[str]:
        """At start-up: finalize every attempt a dead process left streaming, as interrupted (source restart)."""
        return recover(lambda: self.state, self._append)

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
        rt = self._runtime(cid)
        async with rt.lock:
            conv = self._require(cid)
            if rt.active is not None:
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

    def _append(self, event: AnyEvent) -> AnyEvent:
        event = self.store.append(replace(event, ts=event.ts or now_iso()))
        self.state = reduce(self.state, event)
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # noqa: BLE001 - a broken viewer must not break the ledger
                log.exception("listener failed")
        return event

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
