"""What another instance may ask of this one (``app.cluster`` hands each request here, on the loop).

Guarantees: a person's Run/Skip or answer to a tool's question reaches this engine only while the attempt runs
here; the first answer stands (a later one, or values now refused, is dropped). A cancel runs this engine's one
cancel path (``Engine.cancel``, ``requested_by`` naming the requester) for that attempt and turn only; a
leave-policy cancel (``navigation``, ``disconnect``) is ignored while this instance still has viewers of the
conversation. Anything else (an unknown source, an attempt not running here) is ignored.
- Team mode: each runs for the person who asked on the other instance (``actor``), so the event it appends names
  them, as it would have there.
- A relayed event (``Cluster.relay``: another instance could not write the chat because this one holds its write
  lease) is appended here only if it is a share link's ``share_revoked`` or ``share_opened`` for a link this
  conversation has; a revoke of a link already revoked is not appended again. One that cannot be written is logged.
"""

from __future__ import annotations

import contextlib
import logging
from typing import get_args

from engine.attempts import Local
from engine.people import acting_as, set_acting
from ledger.codec import from_dict
from ledger.decide import InputRejected
from ledger.errors import CodecError, StoreError
from ledger.events import ApprovalScope, CancelSource, ShareOpened, ShareRevoked
from store.postgres import Request

log = logging.getLogger("ledger_chat.cluster")

LEAVING: tuple[str, ...] = ("navigation", "disconnect")
SCOPES: tuple[ApprovalScope, ...] = get_args(ApprovalScope)


def serve(engine: Local, request: Request) -> None:
    """On the loop: run one request another instance sent (see the module's guarantees)."""
    cid, source = str(request.get("cid")), str(request.get("source"))
    actor = request.get("actor") if isinstance(request.get("actor"), str) else None
    if request.get("kind") == "approval" and engine.is_running_here(cid):
        scope: ApprovalScope = next((s for s in SCOPES if s == request.get("scope")), "once")
        with contextlib.suppress(InputRejected), acting_as(actor):  # answered meanwhile: the first answer stands
            engine.decide_tool(cid, str(request.get("call")), request.get("run") is True, scope)
        return
    if request.get("kind") == "question" and engine.is_running_here(cid):
        with contextlib.suppress(InputRejected, ValueError), acting_as(actor):  # answered meanwhile, or refused
            qid, action = str(request.get("question")), str(request.get("action"))
            engine.answer_question(cid, qid, action, request.get("content"))
        return
    if request.get("kind") == "event":
        engine.spawn(relayed(engine, cid, request.get("event"), actor), "an event relayed by another instance")
        return
    if source not in get_args(CancelSource) or not engine.is_running_here(cid):
        return
    if source in LEAVING and engine.viewer_count(cid):
        return  # someone still watches it here: only the last viewer leaving counts

    async def cancel() -> None:
        set_acting(actor)  # this task's own context (the engine's tasks start acting for nobody)
        await engine.cancel(
            cid,
            source,  # type: ignore[arg-type]  # checked against CancelSource above
            keep_partial=bool(request.get("keep", True)),
            turn=int(request.get("turn", -1)),
            attempt_id=str(request.get("attempt")),
            requested_by=str(request.get("from")),
        )

    engine.spawn(cancel(), f"cancel requested by {request.get('from')}")


async def relayed(engine: Local, cid: str, data: object, actor: str | None) -> None:
    """Append a share link's event another instance could not write (see the module's guarantees)."""
    try:
        event = from_dict(dict(data)) if isinstance(data, dict) else None
    except CodecError:
        return
    if not isinstance(event, ShareRevoked | ShareOpened) or event.conversation_id != cid:
        return
    conv = engine.conversation(cid)
    share = conv.shares.get(event.share_id) if conv is not None else None
    if share is None or isinstance(event, ShareRevoked) and share.revoked_ts is not None:
        return
    set_acting(actor)  # this task's own context
    try:
        engine.read.append(event)
    except StoreError as exc:
        log.warning("an event relayed for %s could not be written here either: %s", cid, exc)
