"""How an attempt starts: claimed first, then its first events appended, then its worker spawned.

Guarantees: ``start_claimed`` (called under the conversation's lock) claims the attempt through ``Peers`` before
anything is appended; a refused claim raises ``InputRejected`` (a sentence saying why) and appends nothing, so no
attempt runs without an owner and nothing reaches the model. Then the submit or retry event and ``started`` are
appended and the ``AttemptWorker`` spawned; when that fails (a ``StoreError``: the write could not be recorded)
the claim is given back and the error goes to the caller, whose text stays in the box.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.attempt import View
from engine.peers import Peers
from engine.provider import ProviderConfig
from engine.runtimes import Runtime
from engine.worker import AttemptWorker, Workplace
from ledger.events import AnyEvent, Started


@dataclass(frozen=True, slots=True)
class Starting:
    provider: ProviderConfig
    view: View
    place: Workplace


async def start_claimed(peers: Peers, rt: Runtime, first: AnyEvent | None, started: Started, how: Starting) -> None:
    await peers.claim(started.conversation_id, started.attempt_id)
    try:
        if first is not None:  # a continuation has none (``engine.continuing``)
            how.place.append(first)
        rt.active = AttemptWorker.start(started, how.provider, how.view, rt.lock, how.place)
    except BaseException:
        peers.unclaim(started.attempt_id)
        raise
