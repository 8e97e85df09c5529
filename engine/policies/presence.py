"""``DropUnwatched``: a conversation whose answer ended by itself with nobody watching leaves memory once saved.

Guarantees: after an attempt that ended without anyone asking (done, failed, timed out) in a conversation no page
shows here, ``drop_when_saved`` runs on a task of its own: the conversation leaves memory only
once what was appended to it is on disk and while nobody watches it, nothing runs in it and nobody holds its lock.
"""

from __future__ import annotations

from engine.attempts import Attempts, Ended


class DropUnwatched:
    """After an end: a conversation whose answer ended by itself with nobody watching leaves memory once saved."""

    def ended(self, end: Ended, door: Attempts) -> None:
        rt = door.runtimes.get(end.conversation_id)
        if rt is not None and not rt.viewers and end.by_itself:  # it streamed on after its last page left
            door.settings.spawn(drop_when_saved(door, end.conversation_id), f"drop {end.conversation_id}")


def drop(door: Attempts, cid: str) -> bool:
    if not door.runtimes.idle(cid) or not door.read.forget(cid):
        return False
    door.runtimes.pop(cid)
    return True


async def drop_when_saved(door: Attempts, cid: str) -> None:
    """``drop`` the conversation, once what was appended to it is on disk."""
    if drop(door, cid) or door.runtimes.active(cid) is not None or door.elsewhere(cid) is not None:
        return
    if await door.read.flush() and not door.runtimes.viewer_count(cid):
        drop(door, cid)
