"""Asking a person before a tool call runs: the policy's answer (``engine.tools.approval``) carried out and recorded.

Guarantees:
- A call the policy runs without asking is dispatched at once; when a grant let it, ``approval_given`` (by
  ``grant``, with its scope and hash) says so. A ``never`` call is answered ``declined`` with a sentence the model
  reads (the policy forbids it), after an ``approval_given`` (skip, by ``policy``).
- A call that asks records ``approval_asked`` (mode, why, grant hash) and waits for ``Answer`` through
  ``AttemptRun.approvals`` (``AttemptWorker.decide_tool``): the first answer wins, later ones are refused there.
  Run with scope ``chat`` (or any Run under mode ``once``) grants the tool in this chat (in the ledger); scope
  ``server`` also writes the server grant (``ToolHub.grants``, off the event loop). Skip answers ``declined``.
- In team mode a server grant is the chat owner's (``store.grants.server_grant_key``): one person's "always allow" never
  lets a call run unasked in another person's chat.
- Stop while waiting records ``approval_given`` (skip, by ``stop``) and lets the cancellation go on (the caller
  answers the call ``not_run``). Nothing here ever leaves a call without its one result.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import cast

from engine.provider import approval_overrides
from engine.stamps import now_iso
from engine.tools import Answer, Grants, ResolvedTool, ToolHub
from engine.turns.attempt import AttemptRun, PendingCall
from ledger.errors import StoreError
from ledger.events import ApprovalAsked, ApprovalBy, ApprovalDecision, ApprovalGiven, ApprovalMode, ApprovalScope
from ledger.reduce_approval import grant_key
from store.grants import Grant, server_grant_key

log = logging.getLogger("ledger_chat.tools")


async def approved(run: AttemptRun, call: PendingCall, resolved: ResolvedTool, hub: ToolHub) -> bool:
    """Whether the call may be dispatched now (see the module's guarantees); a refused or skipped call has its
    one result already."""
    conv = run.view()
    chat = conv.grants.get(grant_key(resolved.server, resolved.tool)) if conv is not None else None
    key = server_grant_key(conv.owner if conv is not None else None, resolved.server, resolved.tool)
    server = await _server_grant(hub, key)
    grants = Grants(current=resolved.grant_hash, chat=chat, server=server)
    overrides = approval_overrides(run.provider.preset)  # the agent preset's modes (validated on save), if any
    policy = resolved.policy(cast("Mapping[str, ApprovalMode] | None", overrides), grants)

    def given(decision: ApprovalDecision, scope: ApprovalScope, by: ApprovalBy) -> None:
        run.append(
            ApprovalGiven(
                **run.ids, call_id=call.call_id, server=resolved.server, tool=resolved.tool, decision=decision,
                scope=scope, by=by, grant_hash=resolved.grant_hash,
            )
        )  # fmt: skip

    if policy.action == "run":
        if policy.granted is not None:
            given("run", policy.granted, "grant")
        return True
    if policy.action == "refuse":
        given("skip", "once", "policy")
        words = f"Not run: the approval policy for {resolved.tool!r} on {resolved.server!r} forbids this tool."
        run.record_result(call.call_id, "declined", words, None)
        return False
    future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
    run.approvals[call.call_id] = future
    asked = ApprovalAsked(
        **run.ids, call_id=call.call_id, server=resolved.server, tool=resolved.tool, mode=policy.mode, why=policy.why,
        grant_hash=resolved.grant_hash,
    )  # fmt: skip
    run.append(asked)
    try:
        answer = await future
    except asyncio.CancelledError:
        given("skip", "once", "stop")
        raise
    finally:
        run.approvals.pop(call.call_id, None)
    if answer.decision == "skip":
        given("skip", "once", "user")
        run.record_result(call.call_id, "declined", "Declined by the user: this call was not run.", None)
        return False
    scope: ApprovalScope = "chat" if answer.scope == "once" and policy.mode == "once" else answer.scope
    if scope == "server":
        await _grant_server(hub, Grant(key=key, grant_hash=resolved.grant_hash, granted_ts=now_iso()))
    given("run", scope, "user")
    return True


async def _server_grant(hub: ToolHub, key: str) -> str | None:
    try:
        grant = (await asyncio.to_thread(hub.grants.grants)).get(key)
    except StoreError as exc:  # the server grants cannot be read: ask, rather than run or fail the turn
        log.warning("server grants not readable: %s", exc)
        return None
    return grant.grant_hash if grant is not None else None


async def _grant_server(hub: ToolHub, grant: Grant) -> None:
    try:
        await asyncio.to_thread(hub.grants.grant, grant)
    except StoreError as exc:  # this call runs as asked; the grant is not kept (the next call asks again)
        log.warning("server grant for %s not saved: %s", grant.key, exc)
