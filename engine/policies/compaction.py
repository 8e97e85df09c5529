"""``AfterCompaction``: what follows a compaction once it completed (the answer it made room for, a retry, the
answer a stopped compaction left waiting).

Guarantees: the door names what follows each compaction it starts (``wait``); once that compaction's attempt
ended, on a task of its own and under the conversation's lock, it starts through the door only when the
compaction completed, the conversation still exists and nothing else runs or started meanwhile. A compaction
that was stopped, failed, lost its owner claim or was discarded by a delete starts nothing more.
"""

from __future__ import annotations

from engine.attempts import Attempts, Ended, Next
from engine.provider import ProviderConfig


class AfterCompaction:
    def __init__(self) -> None:
        self._waiting: dict[str, tuple[ProviderConfig, Next]] = {}  # compaction attempt id -> what follows it

    def wait(self, attempt_id: str, provider: ProviderConfig, then: Next) -> None:
        self._waiting[attempt_id] = (provider, then)

    def ended(self, end: Ended, door: Attempts) -> None:
        waiting = self._waiting.pop(end.attempt_id, None)
        if waiting is not None and not end.lost:
            door.settings.spawn(self._follow(end, door, *waiting), f"after compaction {end.attempt_id}")

    async def _follow(self, end: Ended, door: Attempts, provider: ProviderConfig, then: Next) -> None:
        rt = door.runtimes.of(end.conversation_id)  # (a conversation nobody watches may have left memory meanwhile)
        async with rt.lock:
            conv = door.read.conversation(end.conversation_id)
            if conv is None:
                door.runtimes.pop(end.conversation_id)  # deleted: nothing follows
                return
            if rt.active is not None or conv.live_attempt() is not None:
                return  # something else runs: nothing follows
            done = conv.attempts.get(end.attempt_id)
            nxt = then(conv) if done is not None and done.status == "complete" else None
            if nxt is not None:
                await door.start(rt, nxt[0], nxt[1], provider)
