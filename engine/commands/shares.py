"""Share links (issue 36): a read-only snapshot of a conversation at ``/s/<token>``, made, updated, revoked and
opened through ``ShareLinks``, each on the owner's record.

Guarantees:
- ``create`` makes a 128-bit token (``secrets.token_urlsafe(16)``) and returns it once: the ledger gets
  ``share_created`` with only its sha256, saved before the link is stored (``store.shares``), so a link that opens
  anything is always on the owner's record; a store that refuses it leaves ``share_revoked`` behind and raises
  ``StoreError``. The snapshot is the conversation's last event when the owner pressed Share.
- ``update`` moves the same link to the conversation's latest event (and options); ``revoke`` removes the link from
  the store first (from the next request on it opens nothing, on every instance: ``find`` reads the store on every
  call), then records ``share_revoked``: here, or, while another instance of a PostgreSQL deployment holds the
  chat's write lease (a long answer streams there), relayed to that instance (``Peers.relay``) until this engine
  folds it (tried again until ``RELAY_WITHIN`` s). Only the chat's owner (or an admin, for ``revoke``) may;
  anyone else's link reads as a missing one (``InputRejected``).
- ``find`` answers a token with the snapshot's conversation and link only while the store holds it, the ledger
  says it holds (not revoked, not expired) and its owner's account is active; anything else is None, alike.
- ``opened`` counts an open: the first of a minute is written at once (``share_opened``, count 1), the rest of that
  minute gathered into one more event when it ends; never who opened it; while another instance writes the chat,
  the count is relayed to it to write; one that cannot be written either way is logged and dropped (reading a link
  never fails for it).
- ``copy`` makes a new conversation of the member's own carrying the snapshot's path, as a branch does
  (``engine.commands.branching``), minus what the link does not show: tool arguments and results unless ticked,
  files unless ticked, reasoning never; it names no origin (the member cannot open the owner's chat).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from engine.commands.branching import branch_events
from engine.commands.engine import Engine, InputRejected
from engine.people import Viewer
from engine.stamps import new_id, now_iso
from ledger.errors import ConversationBusyError, StoreError, UnknownConversationError
from ledger.events import (
    AnyEvent,
    Audience,
    Chunk,
    Created,
    ShareCreated,
    ShareOpened,
    ShareRevoked,
    ShareState,
    ShareUpdated,
    Submitted,
    ToolCalled,
    ToolResult,
)
from ledger.share_view import at_snapshot
from ledger.shares import holds
from ledger.state import ConversationState
from ledger.tree import selected_path
from store.shares import ShareLink, ShareStore, token_hash

log = logging.getLogger("ledger_chat.shares")
NO_SUCH_LINK = "That link does not exist (it may have been revoked)."
WINDOW = 60.0  # seconds: one instance writes at most about one ``share_opened`` a minute per link
HIDDEN = "(not shared)"
RELAY_WITHIN = 30.0  # seconds a revoke keeps trying to be recorded while another instance writes the chat


@dataclass(frozen=True, slots=True)
class ShareOptions:
    tools: bool = False
    attachments: bool = False
    audience: Audience = "members"
    expires: str | None = None  # ISO 8601 UTC


@dataclass(frozen=True, slots=True)
class Shared:
    """A link that holds, as ``find`` answers it: its record, and the events of its conversation."""

    link: ShareLink
    share: ShareState
    events: tuple[AnyEvent, ...]


class ShareLinks:
    def __init__(self, engine: Engine, store: ShareStore, active: Callable[[str | None], bool]) -> None:
        self.engine, self.store, self.active = engine, store, active  # active(owner): the owner's account holds
        self._written: dict[str, float] = {}  # share id -> when its last ``share_opened`` was written here
        self._pending: dict[str, int] = {}  # share id -> opens not written yet

    # --- the owner's commands ------------------------------------------------------------------------------------

    async def create(self, cid: str, viewer: Viewer, options: ShareOptions) -> tuple[str, str]:
        """(token, share id) of a new link to ``cid`` as it is now; the token is given here once."""
        conv = await self._own(cid, viewer)
        token, share_id = secrets.token_urlsafe(16), new_id("share")
        o = options
        made = ShareCreated(conversation_id=cid, share_id=share_id, token_sha256=token_hash(token),
                            at_seq=conv.last_seq, tools=o.tools, attachments=o.attachments, audience=o.audience,
                            expires=o.expires)  # fmt: skip
        stored = await self._record(made)
        link = ShareLink(made.token_sha256, share_id, cid, conv.owner, stored.ts)
        try:
            await asyncio.to_thread(self.store.add, link)
        except StoreError:
            await self._record(ShareRevoked(conversation_id=cid, share_id=share_id))
            raise
        return token, share_id

    async def update(self, cid: str, share_id: str, viewer: Viewer, options: ShareOptions | None = None) -> None:
        """The same link now shows ``cid`` as it is now (and ``options``, if given)."""
        conv = await self._own(cid, viewer)
        share = conv.shares.get(share_id)
        if share is None or share.revoked_ts is not None:
            raise InputRejected(NO_SUCH_LINK)
        keep = ShareOptions(share.tools, share.attachments, share.audience, share.expires)
        o = options or keep
        await self._record(ShareUpdated(conversation_id=cid, share_id=share_id, at_seq=conv.last_seq, tools=o.tools,
                                        attachments=o.attachments, audience=o.audience, expires=o.expires))  # fmt: skip

    async def revoke(self, cid: str, share_id: str, viewer: Viewer) -> None:
        """The link opens nothing from now on; then it is recorded."""
        conv = await self.engine.load(cid)
        if conv is None or share_id not in conv.shares or not (viewer.sees(conv.owner) or viewer.admin):
            raise InputRejected(NO_SUCH_LINK)
        await asyncio.to_thread(self.store.remove, share_id)
        if conv.shares[share_id].revoked_ts is None:
            await self._revoked(cid, share_id)

    async def mine(self, viewer: Viewer) -> list[tuple[ShareLink, ConversationState]]:
        """The links ``viewer`` may list (their own; every one for an admin's ``all``), with their chats."""
        links = await asyncio.to_thread(self.store.links)
        out = []
        for link in links:
            if viewer.sees(link.owner) or viewer.admin:
                conv = await self.engine.load(link.conversation_id)
                if conv is not None and link.share_id in conv.shares:
                    out.append((link, conv))
        return sorted(out, key=lambda pair: pair[1].shares[pair[0].share_id].created_ts, reverse=True)

    # --- the link's readers --------------------------------------------------------------------------------------

    async def find(self, token: str) -> Shared | None:
        """The link ``token`` opens, read afresh (see the module's guarantees); None for every kind of 'no'."""
        link = await asyncio.to_thread(self.store.find, token_hash(token))
        if link is None or not await asyncio.to_thread(self.active, link.owner):
            return None
        try:
            events = await asyncio.to_thread(self.engine.events, link.conversation_id)
        except UnknownConversationError:
            return None
        conv = at_snapshot(events, events[-1].seq if events else 0)
        share = conv.shares.get(link.share_id) if conv is not None else None
        if share is None or not holds(share, now_iso()) or share.token_sha256 != link.token_sha256:
            return None
        return Shared(link, share, events)

    def opened(self, shared: Shared) -> None:
        """Count one open (see the module's guarantees); returns at once."""
        share_id, cid = shared.share.share_id, shared.link.conversation_id
        since = time.monotonic() - self._written.get(share_id, -WINDOW)
        if since >= WINDOW:
            self._written[share_id] = time.monotonic()
            self.engine.spawn(self._write_opens(cid, share_id, 1, 0.0), f"share opened {share_id}")
        elif share_id in self._pending:
            self._pending[share_id] += 1
        else:
            self._pending[share_id] = 1
            self.engine.spawn(self._write_opens(cid, share_id, 0, WINDOW - since), f"share opens {share_id}")

    async def copy(self, shared: Shared, member: Viewer) -> str:
        """A new conversation of ``member``'s carrying the snapshot (see the module's guarantees); its id."""
        conv = at_snapshot(shared.events, shared.share.at_seq)
        if conv is None or member.team and member.person is None:
            raise InputRejected(NO_SUCH_LINK)
        path = selected_path(conv)
        chain = [
            (m, conv.messages[m].selected_attempt_id if conv.messages[m].role == "assistant" else None) for m in path
        ]
        new_cid = new_id("conv")
        events = branch_events(conv._replace(owner=member.person), chain, new_cid, at=path[-1] if path else "",
                               title=f"Copy of {conv.title or 'a shared chat'}")  # fmt: skip
        events = [shown for e in events if (shown := _shown(e, shared.share)) is not None]
        await self.engine.peers.writable(new_cid)
        reason = await self.engine.read.saving_fails()
        if reason is not None:
            raise StoreError(reason)
        for event in events:
            self.engine.read.append(event)
        return new_cid

    # --- helpers ---------------------------------------------------------------------------------------------------

    async def _own(self, cid: str, viewer: Viewer) -> ConversationState:
        conv = await self.engine.load(cid, viewer)
        if conv is None:
            raise InputRejected("That conversation does not exist (it may have been deleted).")
        return conv

    async def _record(self, event: AnyEvent) -> AnyEvent:
        """Append ``event`` to its conversation and wait until it is saved (``StoreError`` when it is not)."""
        reason = await self.engine.read.saving_fails()
        if reason is not None:
            raise StoreError(reason)
        await self.engine.peers.writable(event.conversation_id)
        stored = self.engine.read.append(event)
        if not await self.engine.flush():
            raise StoreError(self.engine.health().saving_fails or "the link was not saved")
        return stored

    async def _revoked(self, cid: str, share_id: str) -> None:
        """Record ``share_revoked`` here, or through the instance writing the chat now (``Peers.relay``) until this
        engine's fold shows it; ``StoreError`` when neither could within ``RELAY_WITHIN`` s."""
        deadline = asyncio.get_running_loop().time() + RELAY_WITHIN
        while True:
            event = ShareRevoked(conversation_id=cid, share_id=share_id)
            try:
                await self._record(event)
                return
            except ConversationBusyError as busy:
                if await self.engine.peers.relay(event, busy.writer) and await self._shows_revoked(cid, share_id):
                    return
                if asyncio.get_running_loop().time() > deadline:
                    raise

    async def _shows_revoked(self, cid: str, share_id: str, within: float = 3.0) -> bool:
        """Whether this engine folds the link's revoke (written by another instance) within ``within`` s."""
        for _ in range(int(within / 0.05)):
            conv = self.engine.conversation(cid)
            share = conv.shares.get(share_id) if conv is not None else None
            if share is None or share.revoked_ts is not None:
                return True
            await asyncio.sleep(0.05)  # the poll interval: another instance's events arrive by following
        return False

    async def _write_opens(self, cid: str, share_id: str, count: int, after: float) -> None:
        if after > 0:
            await asyncio.sleep(after)
            self._written[share_id] = time.monotonic()
            count = self._pending.pop(share_id, 0)
        try:
            await self.engine.peers.writable(cid)
            if self.engine.conversation(cid) is not None:
                event = ShareOpened(conversation_id=cid, share_id=share_id, count=count)
                try:
                    self.engine.read.append(event)
                except ConversationBusyError as busy:  # another instance writes the chat: it counts them
                    if not await self.engine.peers.relay(event, busy.writer):
                        raise
                self.engine.presence.release(cid)  # read only to be counted: dropped again once saved
        except Exception as exc:  # noqa: BLE001 - a count that cannot be written never fails a reader
            log.warning("could not count %d open(s) of a share link of %s: %s", count, cid, exc)


def _shown(event: AnyEvent, share: ShareState) -> AnyEvent | None:
    """A copied event as the link shows it: files and tool details only when ticked, never reasoning."""
    if isinstance(event, Created):
        return replace(event, branched_from=None, branched_at=None)
    if isinstance(event, Chunk) and event.block == "reasoning":
        return None
    if isinstance(event, Submitted) and not share.attachments:
        return replace(event, attachments=())
    if isinstance(event, ToolCalled) and not share.tools:
        return replace(event, arguments="{}")
    if isinstance(event, ToolResult) and not share.tools:
        return replace(event, content=HIDDEN, size=len(HIDDEN), parts=(), structured=None, whole=None)
    return event
