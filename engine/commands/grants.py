"""The "always allow" grants a person gave, listed and revoked (the Tools panel's commands).

Guarantees:
- A chat grant is read from its conversation's state (``ConversationState.grants``, folded from the ledger) and
  revoked by appending ``grant_revoked`` to that conversation: a reload, a second tab and a replay agree.
- A server grant is read from and revoked in the hub's grant store (``store.grants``, shared by every instance on
  one PostgreSQL database), off the event loop; a store that fails raises ``StoreError`` with its reason.
- In team mode each person lists and revokes only their own server grants (``person``: the page's viewer).
- Revoking what is not granted changes nothing and says so (``False``). The next call of a revoked tool asks.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from engine.commands.engine import Engine
from ledger.events import ApprovalScope, GrantRevoked
from ledger.reduce_approval import grant_key
from store.grants import Grant, server_grant_key, split_key


@dataclass(frozen=True, slots=True)
class GrantView:
    """One grant as the Tools panel lists it."""

    scope: ApprovalScope
    server: str
    tool: str
    grant_hash: str
    granted_ts: str | None = None  # server grants: when it was given


def chat_grants(engine: Engine, cid: str | None) -> tuple[GrantView, ...]:
    conv = engine.conversation(cid) if cid is not None else None  # read again if it left memory meanwhile
    if conv is None:
        return ()
    return tuple(GrantView("chat", *_split(key), grant_hash=h) for key, h in sorted(conv.grants.items()))


async def server_grants(engine: Engine, person: str | None = None) -> tuple[GrantView, ...]:
    """The server grants ``person`` gave (None: personal mode's, the only ones there)."""
    if engine.tools is None:
        return ()
    grants: dict[str, Grant] = await asyncio.to_thread(engine.tools.grants.grants)
    mine = ((split_key(g.key), g) for g in sorted(grants.values(), key=lambda g: g.key))
    return tuple(
        GrantView("server", server, tool, grant_hash=g.grant_hash, granted_ts=g.granted_ts)
        for (owner, server, tool), g in mine
        if owner == person
    )


async def revoke(engine: Engine, cid: str | None, grant: GrantView, person: str | None = None) -> bool:
    """Take back ``grant``: in the chat ``cid`` (scope ``chat``) or ``person``'s on its server (scope ``server``)."""
    if grant.scope == "server":
        mine = server_grant_key(person, grant.server, grant.tool)
        return engine.tools is not None and await asyncio.to_thread(engine.tools.grants.revoke, mine)
    key = grant_key(grant.server, grant.tool)
    conv = engine.conversation(cid) if cid is not None else None  # read again if it left memory meanwhile
    if conv is None or cid is None or key not in conv.grants:
        return False
    revoked = GrantRevoked(conversation_id=cid, server=grant.server, tool=grant.tool, grant_hash=conv.grants[key])
    engine.read.append(revoked)
    return True


def _split(key: str) -> tuple[str, str]:
    server, _, tool = key.partition("/")
    return server, tool
