"""This instance's owner claims on the attempts it runs (``store.postgres.owners``), and what happens when one is
lost.

Guarantees:
- ``claim`` (the engine's ``Peers.claim``, before an attempt's first event is appended) records this instance as
  the attempt's owner in the database; a refusal (``False`` from an older ``AttemptOwners``, ``ClaimRefused``) or
  a database that cannot be reached raises ``InputRejected`` with a readable sentence: the attempt is not started.
  The epoch the database issues is held in the store (``PgStore.hold(attempt_id, epoch)``) before the attempt's
  first event is appended, so every event of it is checked by the database; ``unhold`` at its end.
- A claim is released once the attempt's end (``persisted``) is durable (``ended``), at once when its attempt did
  not start after all (``unclaim``); a failed release is left to the database's janitor (never retried here).
- ``lost`` (the ownership thread: the claim is gone or has another epoch) and ``refused`` (the writer thread: the
  database refused the attempt's writes) hop to the loop (``call_soon_threadsafe``); there the attempt stops here
  without an end (``Local.lost``: its worker is cancelled and writes nothing more) and the conversation is read
  again from the store, at once and once the store's writer dealt with what it still held (written, refused or
  dropped) and the store caught up with the database (``PgStore.hold(cid)``), so pages show the other end.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from engine.attempts import Local
from ledger.decide import InputRejected
from ledger.errors import StoreError
from store.postgres import AttemptOwners, PgStore

log = logging.getLogger("ledger_chat.cluster")
CATCH_UP_WITHIN = 10.0  # seconds to wait until the other instance's end of a lost attempt is read here
NOT_CLAIMED = (
    "The answer could not be started: this instance could not become its owner ({}). Your message was not sent "
    "and is still in the box; send it again in a moment."
)


class Claims:
    def __init__(self, store: PgStore, owners: AttemptOwners, local: Callable[[], Local]) -> None:
        self.store, self.owners, self._local = store, owners, local
        self.loop: asyncio.AbstractEventLoop | None = None  # the cluster's, from its ``start`` on
        self.owned: dict[str, str] = {}  # attempt id -> conversation id, claimed here and not yet ended
        self.epochs: dict[str, int] = {}  # attempt id -> its fencing epoch, when the database issues one

    @property
    def engine(self) -> Local:
        return self._local()

    async def claim(self, cid: str, attempt_id: str) -> None:
        try:
            claimed: object = await asyncio.to_thread(self.owners.claim, attempt_id, cid)
        except StoreError as exc:
            raise InputRejected(NOT_CLAIMED.format(str(exc).rstrip(".") or type(exc).__name__)) from None
        if claimed is False:
            raise InputRejected(NOT_CLAIMED.format("another instance owns it"))
        self.owned[attempt_id] = cid
        if isinstance(claimed, int) and not isinstance(claimed, bool):
            self.epochs[attempt_id] = claimed
            self.store.hold(attempt_id, claimed)  # every event of the attempt is written with it, checked by the db

    def unclaim(self, attempt_id: str) -> None:
        if self.owned.pop(attempt_id, None) is not None:
            self.engine.spawn(self._release(attempt_id, durable=False), f"release {attempt_id}")

    def ended(self, attempt_id: str) -> None:
        """The attempt's ``persisted`` was folded here: release its claim once that is durable. Its epoch goes
        at once: a later event naming the attempt (a branch's copy of it) is not of this run."""
        if self.owned.pop(attempt_id, None) is not None:
            self.forget(attempt_id)
            self.engine.spawn(self._release(attempt_id), f"release {attempt_id}")

    async def _release(self, attempt_id: str, *, durable: bool = True) -> None:
        self.forget(attempt_id)
        if not durable or await self.engine.read.flush():  # the end is durable
            with contextlib.suppress(StoreError):
                await asyncio.to_thread(self.owners.release, [attempt_id])

    def forget(self, attempt_id: str) -> None:
        """Later events of the attempt carry no epoch (``PgStore.unhold``): its run here is over."""
        if self.epochs.pop(attempt_id, None) is not None:
            self.store.unhold(attempt_id)

    # --- a claim lost ------------------------------------------------------------------------------------------

    def lost(self, attempt_id: str) -> None:
        """On the ownership thread (``AttemptOwners.on_lost``)."""
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self._lose, attempt_id)

    def refused(self, cid: str, attempt_ids: list[str]) -> None:
        """On the store's writer thread (``PgStore.on_refused``)."""
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self.lose_all, cid, list(attempt_ids))

    def _lose(self, attempt_id: str) -> None:
        cid = self.owned.get(attempt_id)
        if cid is not None:
            self.lose_all(cid, [attempt_id])

    def lose_all(self, cid: str, attempt_ids: list[str]) -> None:
        """On the loop: these attempts are another instance's to end; stop them here, show the store's copy."""
        for attempt_id in attempt_ids:
            self.owned.pop(attempt_id, None)
            self.forget(attempt_id)
        log.warning("attempt(s) %s lost their owner claim here: stopped without an end", ", ".join(attempt_ids))
        self.engine.lost(cid, attempt_ids)
        self.engine.spawn(self._settled(cid, attempt_ids), f"re-read {cid}")

    async def _settled(self, cid: str, attempt_ids: list[str]) -> None:
        """Read the conversation again until the store shows the lost attempts ended (once it dealt with what it
        still held of them, written, refused or dropped with the lost write lease, and caught up with the database
        by taking the write lease: ``PgStore.hold(cid)``), every 0.1 s for at most ``CATCH_UP_WITHIN`` s."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CATCH_UP_WITHIN
        while loop.time() < deadline:
            with contextlib.suppress(StoreError):  # busy: the other instance still writes its last events
                self.store.hold(cid)
            self.engine.lost(cid, attempt_ids)
            conv = self.engine.conversation(cid)
            if conv is None or not any(a.is_live for i, a in conv.attempts.items() if i in attempt_ids):
                return
            await asyncio.sleep(0.1)  # the retry interval until the store holds the other instance's end
