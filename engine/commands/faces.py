"""What pages and the cluster use through the engine, stated as methods: the read side's (``engine.read.side``),
the viewers' (``engine.commands.presence``) and compaction's and Continue's (``engine.commands.compacting``,
``engine.commands.continuing``), each a call of that part and nothing more.

Guarantees: every method here only forwards to the part it names (no state of its own, nothing appended), so the
engine's face is written down and type-checked, not assigned at run time; the parts stay reachable as
``engine.read``, ``engine.commands.presence``, ``engine.compactor`` and ``engine.commands.continuing``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from engine.commands.compacting import Compactor
from engine.commands.continuing import Continuing
from engine.commands.presence import Presence
from engine.people import PERSONAL, Viewer
from engine.provider import Meter
from engine.read import Listener, ReadSide
from ledger.events import AnyEvent, CancelSource
from ledger.search import Hit
from ledger.state import ConversationState, State
from ledger.summary import ConversationSummary
from store.health import StoreHealth


def _always() -> bool:
    return True


class ReadFace:
    read: ReadSide

    async def load(self, cid: str, viewer: Viewer = PERSONAL) -> ConversationState | None:
        """Read on a worker thread (what pages use); someone else's conversation is None, as a missing one."""
        conv = await self.read.load(cid)
        return conv if conv is None or viewer.sees(conv.owner) else None

    def is_loaded(self, cid: str) -> bool:
        return self.read.is_loaded(cid)

    def loaded(self) -> list[str]:
        return self.read.loaded()

    def read_conversations(self, state: State | None = None, viewer: Viewer = PERSONAL) -> Iterator[ConversationState]:
        return self.read.read_conversations(state, viewer)

    def summaries(self, query: str = "", viewer: Viewer = PERSONAL) -> list[ConversationSummary]:
        return self.read.summaries(query, viewer)

    def owner(self, cid: str) -> tuple[bool, str | None]:  # (live, owner)
        return self.read.owner(cid)

    def search(self, query: str, limit: int = 20, viewer: Viewer = PERSONAL) -> list[Hit]:
        return self.read.search(query, limit, viewer)

    async def search_async(
        self, query: str, limit: int = 20, still_wanted: Callable[[], bool] = _always, viewer: Viewer = PERSONAL
    ) -> list[Hit]:
        return await self.read.search_async(query, limit, still_wanted, viewer)

    def events(self, cid: str) -> tuple[AnyEvent, ...]:
        return self.read.events(cid)

    async def exported(self, cid: str, viewer: Viewer = PERSONAL) -> tuple[AnyEvent, ...] | None:
        return await self.read.exported(cid, viewer)

    def health(self) -> StoreHealth:
        return self.read.health()

    async def flush(self) -> bool:
        return await self.read.flush()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        return self.read.subscribe(listener)

    def absorb(self, events: list[AnyEvent]) -> None:
        self.read.absorb(events)


class PresenceFace:
    presence: Presence

    async def viewer_joined(self, cid: str, viewer: str) -> None:
        await self.presence.viewer_joined(cid, viewer)

    async def viewer_left(self, cid: str, viewer: str, source: CancelSource = "navigation") -> None:
        await self.presence.viewer_left(cid, viewer, source)

    def drop(self, cid: str) -> bool:  # forget a conversation no page shows and nothing streams in
        return self.presence.drop(cid)


class CompactionFace:
    compactor: Compactor
    continuing: Continuing

    async def continue_answer(self, cid: str, message_id: str) -> str:  # (``engine.commands.continuing``)
        return await self.continuing.start(cid, message_id)

    async def compact(
        self, cid: str, model: str | None = None
    ) -> str:  # the Compact button (``engine.commands.compacting``)
        return await self.compactor.compact(cid, model)

    async def compact_and_retry(self, cid: str, message_id: str, model: str | None = None) -> str:
        return await self.compactor.compact_and_retry(cid, message_id, model)

    async def retry_compaction(self, cid: str, message_id: str, model: str | None = None) -> str:
        return await self.compactor.retry(cid, message_id, model)

    async def meter(self, cid: str, model: str, instructions: str = "") -> Meter:  # how full the next request is
        return await self.compactor.meter(cid, model, instructions)
