"""Viewers leaving a chat and coming back (docs/architecture.md), and when a conversation may leave memory.

Guarantees:
- Only the last viewer leaving counts. While an attempt runs here it records ``detached`` and, under the
  ``cancel`` leave policy, runs the one cancel path (source ``navigation`` or ``disconnect``, for that attempt's
  turn, partial kept); the first viewer coming back to a detached stream records ``attached``. While another
  instance streams in it, the leave policy asks that attempt's owner.
- A conversation leaves memory (``drop``: its state and the store's copy) only when nobody watches it, nothing
  runs in it and nobody holds its lock: when its last viewer leaves, when an answer that ended by itself has
  nobody watching, and after an operation no page asked for (``release``); each time once what was appended to
  it is saved. A dropped conversation is read again when it is opened.
- ``lost``: an attempt whose owner claim is gone stops here without an end, and its conversation is read again
  from the store, so pages show the end the other instance wrote.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection

from engine.peers import LiveElsewhere
from engine.read_side import ReadSide
from engine.runtimes import Runtimes
from engine.settings import EngineSettings
from engine.worker import AttemptWorker
from ledger.events import Attached, CancelSource, Detached

#: The one cancel path, for the attempt of one turn.
CancelTurn = Callable[[str, CancelSource, int], Awaitable[bool]]


class Presence:
    def __init__(
        self,
        read: ReadSide,
        runtimes: Runtimes,
        settings: EngineSettings,
        cancel: CancelTurn,
        elsewhere: Callable[[str], LiveElsewhere | None],
    ) -> None:
        self._read, self._runtimes, self._settings = read, runtimes, settings
        self._cancel, self._elsewhere = cancel, elsewhere

    async def viewer_joined(self, cid: str, viewer: str) -> None:
        rt = self._runtimes.of(cid)
        was_empty = not rt.viewers
        rt.viewers.add(viewer)
        conv = self._read.conversation(cid)
        if was_empty and rt.active is not None and conv is not None and conv.detached:
            self._read.append(Attached(**rt.active.run.ids))

    async def viewer_left(self, cid: str, viewer: str, source: CancelSource = "navigation") -> None:
        rt = self._runtimes.get(cid)
        if rt is None or viewer not in rt.viewers:
            return
        rt.viewers.discard(viewer)
        cancels = self._settings.limits.leave_policy == "cancel"
        if not rt.viewers and rt.active is None:
            live = self._elsewhere(cid)  # the last viewer here left while another instance streams: ask its owner
            if live is not None and cancels:
                await self._cancel(cid, source, live.turn)
            await self._drop_when_saved(cid)
            return
        if rt.viewers or rt.active is None or self._read.conversation(cid) is None:
            return
        self._read.append(Detached(**rt.active.run.ids))
        if cancels:
            await self._cancel(cid, source, rt.active.run.turn)

    def ended(self, worker: AttemptWorker) -> None:
        """An attempt ended (under its conversation's lock): nothing runs here any more."""
        rt = self._runtimes.get(worker.run.conversation_id)
        if rt is None or rt.active is not worker:
            return
        rt.active = None
        if not rt.viewers and worker.by_itself:  # it streamed on after its last page left
            self._settings.spawn(self._drop_when_saved(rt.conversation_id), f"drop {rt.conversation_id}")

    def lost(self, cid: str, attempt_ids: Collection[str]) -> None:
        """These attempts' owner claims are gone (another instance ends them): the worker of any of them running
        here stops without an end (``AttemptWorker.lose``), and the conversation is read again from the store."""
        worker = self._runtimes.active(cid)
        if worker is not None and worker.run.attempt_id in attempt_ids:
            worker.lose()
        self._read.reread(cid)

    def drop(self, cid: str) -> bool:
        """Forget a conversation no page shows and nothing streams in (it is read again when opened)."""
        if not self._runtimes.idle(cid) or not self._read.forget(cid):
            return False
        self._runtimes.pop(cid)
        return True

    def release(self, cid: str) -> None:
        """A conversation read for an operation no page asked for is dropped again once saved (if no page shows it
        by then)."""
        rt = self._runtimes.get(cid)
        if rt is None or (not rt.viewers and rt.active is None):
            self._settings.spawn(self._drop_when_saved(cid), f"drop {cid}")

    async def _drop_when_saved(self, cid: str) -> None:
        """``drop`` the conversation, once what was appended to it is on disk."""
        if self.drop(cid) or self._runtimes.active(cid) is not None or self._elsewhere(cid) is not None:
            return
        if await self._read.flush() and not self._runtimes.viewer_count(cid):
            self.drop(cid)
