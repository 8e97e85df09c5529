"""``ReadSide``: the engine's view of the ledger, and the only place its state changes.

Guarantees:
- ``state`` is always ``replay`` of the stored events of the conversations it holds: it changes only here, by
  ``append`` (stamp ``ts`` → the store gives the seq → reduce → notify subscribers, in that order, on the event
  loop), by ``absorb`` (events another instance stored: folded the same way, in seq order, never appended
  again), by loading a conversation, by ``reread`` (the store's copy replaces the held one) and by ``forget``.
  A deleted conversation leaves the state (the store keeps its tombstone); a broken subscriber never breaks the
  ledger.
- Lazy history: nothing is read at start-up (the store's index gives ``summaries``). ``conversation(cid)`` reads a
  conversation not held yet on the loop; ``await load(cid)`` reads it in a worker thread (what pages use).
  ``read_conversations``, ``search_async`` and ``exported`` read unloaded conversations without keeping them.
- Search (``ledger.search``) finds chats whose title, or a line of a message shown, has every word of the query,
  newest first: ``search`` never reads a file, ``search_async`` reads the others in a worker thread, one at a time.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from dataclasses import replace

from engine.people import PERSONAL, Viewer, acting
from engine.stamps import now_iso
from ledger.errors import UnknownConversationError
from ledger.events import AnyEvent, Deleted
from ledger.listing import Listing
from ledger.reducer import reduce, replay
from ledger.search import Hit, match, title_hit
from ledger.state import EMPTY_STATE, ConversationState, State
from ledger.summary import ConversationSummary, newest_first
from store.api import EventStore
from store.health import StoreHealth

log = logging.getLogger("ledger_chat.engine")
Listener = Callable[[AnyEvent], None]


class ReadSide:
    def __init__(self, store: EventStore) -> None:
        self.store = store
        self._state: State = EMPTY_STATE  # the loaded conversations only
        self._listeners: list[Listener] = []
        self._listing = Listing()  # the conversation list in order, updated per changed conversation

    # --- reading -----------------------------------------------------------------------------------------------

    @property
    def state(self) -> State:
        """The loaded conversations, each equal to ``replay`` of its stored events (read-only: see ``append``)."""
        return self._state

    def conversation(self, cid: str) -> ConversationState | None:
        """The conversation's state, read from the store first if it is not loaded; None when it does not exist
        or was deleted."""
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

    def loaded(self) -> list[str]:
        """The conversations held in ``state`` now."""
        return list(self.state.conversations)

    def reread(self, cid: str) -> None:
        """Replace a loaded conversation by ``replay`` of what the store holds now (another instance's end of an
        attempt this one lost), and tell subscribers (with its last event) so that pages render it again."""
        conv = self._read(cid, keep=True) if cid in self.state.conversations else None
        if conv is None or self._install(cid, conv) is None:
            return
        last = self.store.events(cid)[-1:]
        for listener in list(self._listeners) if last else ():
            try:
                listener(last[0])
            except Exception:  # noqa: BLE001 - a broken viewer must not break the ledger
                log.exception("listener failed")

    def forget(self, cid: str) -> bool:
        """Drop a conversation from memory (``state`` and store); False when the store keeps it (PostgreSQL)."""
        if not self.store.forget(cid):
            return False
        if self.is_loaded(cid):
            self._state = State(conversations=self.state.conversations.delete(cid))
        return True

    def read_conversations(self, state: State | None = None, viewer: Viewer = PERSONAL) -> Iterator[ConversationState]:
        """Every live conversation ``viewer`` sees, newest first, one at a time: loaded ones from ``state``, the
        others read from the store without being kept (safe in a worker thread given a ``state`` snapshot)."""
        state = state or self.state
        for summary in newest_first(self.store.summaries()):
            if not viewer.sees(summary.owner):
                continue
            conv = state.conversations.get(summary.conversation_id) or self._read(summary.conversation_id, False)
            if conv is not None and not conv.deleted:
                yield conv

    def summaries(self, query: str = "", viewer: Viewer = PERSONAL) -> list[ConversationSummary]:
        """The conversation list: live conversations ``viewer`` sees whose title has every word of ``query``,
        newest first (from the store's index: no conversation is read)."""
        listing = self._listing.newest_first(self.store)
        words = query.casefold().split()
        if words:
            titles = self._listing.titles()
            listing = [listing[n] for n, title in enumerate(titles) if all(w in title for w in words)]
        return listing if not viewer.team else [s for s in listing if viewer.sees(s.owner)]

    def owner(self, cid: str) -> tuple[bool, str | None]:
        """(whether ``cid`` is a live conversation, its owner), from memory or the store's index."""
        conv = self.state.conversations.get(cid)
        if conv is not None:
            return not conv.deleted, conv.owner
        summary = self.store.summary(cid)
        return (summary is not None and not summary.deleted), (summary.owner if summary else None)

    def search(self, query: str, limit: int = 20, viewer: Viewer = PERSONAL) -> list[Hit]:
        """Every title (from the index) and the messages of loaded conversations; never reads a file."""
        return self._search(query, limit, self.summaries(viewer=viewer), self.state, None)

    async def search_async(
        self, query: str, limit: int = 20, still_wanted: Callable[[], bool] = lambda: True, viewer: Viewer = PERSONAL
    ) -> list[Hit]:
        """``search`` over the messages of every conversation ``viewer`` sees: those not loaded are read in a
        worker thread, one at a time and not kept, newest first, until ``limit`` hits or ``still_wanted()`` turns
        False."""
        state, summaries = self.state, self.summaries(viewer=viewer)
        return await asyncio.to_thread(self._search, query, limit, summaries, state, still_wanted)

    def events(self, cid: str) -> tuple[AnyEvent, ...]:
        """The conversation's ledger, in seq order; reading it keeps nothing in memory that was not loaded."""
        return self.store.events(cid, keep=self.is_loaded(cid))

    async def exported(self, cid: str, viewer: Viewer = PERSONAL) -> tuple[AnyEvent, ...] | None:
        """The ledger of a live conversation ``viewer`` sees, read in a worker thread without loading it; None if
        there is none (or it is someone else's: the same answer)."""
        live, owner = self.owner(cid)
        if not live or self.store.is_deleted(cid) or not viewer.sees(owner):
            return None
        try:
            return await asyncio.to_thread(self.events, cid)
        except UnknownConversationError:
            return None

    def health(self) -> StoreHealth:
        """Whether saving works (and why not), and every problem found in the data folder; read live."""
        return self.store.health()

    async def saving_fails(self, retry_within: float = 2.0) -> str | None:
        """Why saving fails (None when it works), asked after retrying the failed write at once and waiting for it
        at most ``retry_within`` s: a command right after a database restart is not refused for the write that
        failed during it."""
        if self.store.health().saving_fails is None:
            return None
        await asyncio.to_thread(self.store.flush_sync, retry_within)
        return self.store.health().saving_fails

    async def flush(self) -> bool:
        """Wait until everything appended so far is on disk; False if saving failed meanwhile."""
        return await self.store.flush()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    # --- changing: the only code that assigns ``state`` ---------------------------------------------------------

    def append(self, event: AnyEvent) -> AnyEvent:
        """Stamp (its time; a command's actor, from ``engine.people.acting``), store (the store gives the seq),
        reduce, notify; returns the stored event."""
        cid = event.conversation_id
        if cid not in self.state.conversations:
            self.conversation(cid)  # an append always folds into the whole conversation
        stamped = replace(event, ts=event.ts or now_iso())
        if getattr(event, "actor", "") is None and (who := acting()) is not None:  # a command, in team mode
            stamped = replace(stamped, actor=who)  # type: ignore[arg-type]
        event = self.store.append(stamped)
        self._fold_missing(event)
        return self._fold(event)

    def absorb(self, events: list[AnyEvent]) -> None:
        """Fold events other instances stored (already in this store: never appended again), in seq order; those
        already folded are skipped, and any the store holds before them are folded first."""
        for event in events:
            conv = self.state.conversations.get(event.conversation_id)
            if conv is not None and event.seq <= conv.last_seq:
                continue
            self._fold_missing(event)
            self._fold(event)

    def _fold(self, event: AnyEvent) -> AnyEvent:
        """Reduce a stored event (its seq assigned) into the state, if its conversation is loaded or new, and hand it
        to subscribers."""
        cid = event.conversation_id
        self._listing.touch(cid)
        if cid in self.state.conversations or event.seq == 1:
            self._state = reduce(self.state, event)
            if isinstance(event, Deleted):
                self._state = State(conversations=self.state.conversations.delete(cid))
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # noqa: BLE001 - a broken viewer must not break the ledger
                log.exception("listener failed")
        return event

    def _fold_missing(self, event: AnyEvent) -> None:
        """Events another instance stored just before ``event`` (caught up by this store) but not folded yet."""
        conv = self.state.conversations.get(event.conversation_id)
        if conv is None or conv.deleted or event.seq <= conv.last_seq + 1:
            return
        for missing in self.store.events(event.conversation_id):
            if conv.last_seq < missing.seq < event.seq:
                self._fold(missing)

    def _install(self, cid: str, conv: ConversationState | None) -> ConversationState | None:
        """Make a conversation read from the store part of ``state`` (on the event loop)."""
        if conv is None or self.store.is_deleted(cid):
            return None
        self._state = State(conversations=self.state.conversations.set(cid, conv))
        return conv

    def _read(self, cid: str, keep: bool) -> ConversationState | None:
        """The conversation replayed from its stored events (None when the store does not know it)."""
        try:
            events = self.store.events(cid, keep=keep)
        except UnknownConversationError:
            return None
        return replay(events).conversations.get(cid)

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
