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

from collections.abc import Collection

from engine.attempts import Attempts
from engine.policies import drop, drop_when_saved
from ledger.events import Attached, CancelSource, Detached


class Presence:
    def __init__(self, door: Attempts) -> None:
        self.door = door

    async def viewer_joined(self, cid: str, viewer: str) -> None:
        rt = self.door.runtimes.of(cid)
        was_empty = not rt.viewers
        rt.viewers.add(viewer)
        conv = self.door.read.conversation(cid)
        if was_empty and rt.active is not None and conv is not None and conv.detached:
            self.door.read.append(Attached(**rt.active.run.ids))

    async def viewer_left(self, cid: str, viewer: str, source: CancelSource = "navigation") -> None:
        door = self.door
        rt = door.runtimes.get(cid)
        if rt is None or viewer not in rt.viewers:
            return
        rt.viewers.discard(viewer)
        cancels = door.settings.limits.leave_policy == "cancel"
        if not rt.viewers and rt.active is None:
            live = door.elsewhere(cid)  # the last viewer here left while another instance streams: ask its owner
            if live is not None and cancels:
                await door.cancel(cid, source, turn=live.turn)
            await drop_when_saved(door, cid)
            return
        if rt.viewers or rt.active is None or door.read.conversation(cid) is None:
            return
        door.read.append(Detached(**rt.active.run.ids))
        if cancels:
            await door.cancel(cid, source, turn=rt.active.run.turn)

    def lost(self, cid: str, attempt_ids: Collection[str]) -> None:
        """These attempts' owner claims are gone (another instance ends them): the worker of any of them running
        here stops without an end (``AttemptWorker.lose``), and the conversation is read again from the store."""
        worker = self.door.runtimes.active(cid)
        if worker is not None and worker.run.attempt_id in attempt_ids:
            worker.lose()
        self.door.read.reread(cid)

    def drop(self, cid: str) -> bool:
        """Forget a conversation no page shows and nothing streams in (it is read again when opened)."""
        return drop(self.door, cid)

    def release(self, cid: str) -> None:
        """A conversation read for an operation no page asked for is dropped again once saved (if no page shows it
        by then)."""
        rt = self.door.runtimes.get(cid)
        if rt is None or (not rt.viewers and rt.active is None):
            self.door.settings.spawn(drop_when_saved(self.door, cid), f"drop {cid}")
