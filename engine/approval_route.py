"""Where a person's answer to a call waiting for approval goes: to the worker running the attempt here, or, when
another instance on the same database runs it, to that owner (``engine.peers.Peers.answer``).

Guarantees: an answer reaches at most one waiting call; here, the first answer wins and a later one raises
``InputRejected`` (the page drops it quietly: the card shows the first answer); an answer for an attempt another
instance runs is sent to it in the background and applied there under the same rule; with no attempt running
anywhere, ``InputRejected`` says the call no longer waits.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from engine.peers import Peers
from engine.worker import AttemptWorker
from ledger.decide import InputRejected
from ledger.events import ApprovalScope

NO_LONGER = "That tool call is no longer waiting for a decision."


def route_answer(
    worker: AttemptWorker | None,
    peers: Peers,
    spawn: Callable[[Coroutine[Any, Any, None], str], None],
    cid: str,
    answer: tuple[str, bool, ApprovalScope],
) -> None:
    call_id, run_it, scope = answer
    if worker is not None:
        if not worker.decide_tool(call_id, run_it, scope):
            raise InputRejected(NO_LONGER)
        return
    elsewhere = peers.streaming(cid)
    if elsewhere is None:
        raise InputRejected(NO_LONGER)
    spawn(peers.answer(cid, elsewhere, call_id, run_it, scope), "an approval for the attempt's owner")
