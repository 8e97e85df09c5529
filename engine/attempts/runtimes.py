"""Per conversation, what only this process knows: the lock that serializes cancel and finalize, the attempt it
runs (its ``AttemptWorker``) and the viewers (pages) that show it.

Guarantees: a ``Runtime`` is made on first use and dropped with its conversation; ``streaming_here`` lists the
conversations whose attempt runs in this process (never another instance's); ``idle`` is true only when nobody
watches the conversation, nothing runs in it and nobody holds its lock (then it may leave memory).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.turns import AttemptWorker, ChatLock


@dataclass(slots=True)
class Runtime:
    """Per conversation: the lock that serializes cancel/finalize, the running attempt, the viewers."""

    conversation_id: str
    lock: ChatLock = field(default_factory=ChatLock)
    active: AttemptWorker | None = None
    viewers: set[str] = field(default_factory=set)


class Runtimes:
    def __init__(self) -> None:
        self._by_cid: dict[str, Runtime] = {}

    def get(self, cid: str) -> Runtime | None:
        return self._by_cid.get(cid)

    def of(self, cid: str) -> Runtime:
        """The conversation's runtime, made if there is none yet."""
        rt = self._by_cid.get(cid)
        if rt is None:
            rt = self._by_cid[cid] = Runtime(conversation_id=cid)
        return rt

    def pop(self, cid: str) -> None:
        self._by_cid.pop(cid, None)

    def active(self, cid: str) -> AttemptWorker | None:
        """The worker of the attempt this process runs in the conversation, if any."""
        rt = self._by_cid.get(cid)
        return rt.active if rt else None

    def answering(self, cid: str) -> bool:
        """Whether an attempt other than a chat's title runs here (a title never makes a chat look busy)."""
        worker = self.active(cid)
        return worker is not None and worker.run.purpose != "title"

    def streaming_here(self) -> list[str]:
        return [cid for cid, rt in self._by_cid.items() if rt.active is not None]

    def viewer_count(self, cid: str) -> int:
        rt = self._by_cid.get(cid)
        return len(rt.viewers) if rt else 0

    def idle(self, cid: str) -> bool:
        rt = self._by_cid.get(cid)
        return rt is None or not (rt.viewers or rt.active is not None or rt.lock.locked())
