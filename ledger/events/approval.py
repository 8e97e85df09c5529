"""Waiting for a person's approval of a tool call: asked, given (or refused, or answered for the person), and a
grant taken back (the reducer: ``ledger.reduce_approval``).

Guarantees:
- Immutable values like every event; they belong to ``ledger.events.core.AnyEvent`` (``ApprovalEvent`` is added there).
- ``approval_asked`` puts its call in the visible ``waiting`` phase with the time it began waiting, the mode and
  why (``ApprovalWhy``); ``approval_given`` ends that wait: ``run`` sends the call back to ``ready`` (dispatched
  next), ``skip`` leaves it for its one ``tool_result`` (``declined`` or ``not_run``). The first answer of a call
  is the one applied: a later ``approval_given`` for the same call changes nothing.
- A ``run`` given with scope ``chat`` by the user grants the tool, bound to ``grant_hash``, in this conversation
  (``ConversationState.grants``, key ``server/tool``); ``grant_revoked`` with scope ``chat`` removes it. Server
  grants live in the grant store (``store.grants``), not in a conversation; ``approval_given`` records them.
- Old ledgers: ``tool_awaiting_approval`` (``ledger.events.agent``) still decodes and still means ``waiting``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from ledger.events.values import Event, Flags

#: run without asking, ask every time, ask once per chat (then run in that chat), never run.
ApprovalMode = Literal["run", "ask", "once", "never"]
#: Where the mode came from: the server's config (for this tool or ``*``; ``"confirm": true`` is ``*``), a preset, the
#: tool's annotations (read-only, destructive, open world, none), or a grant that no longer fits the tool.
ApprovalWhy = Literal[
    "config_tool",
    "config_server",
    "preset_tool",
    "preset_server",
    "read_only",
    "destructive",
    "open_world",
    "no_hints",
    "chat_grant_void",
    "server_grant_void",
]
ApprovalDecision = Literal["run", "skip"]
#: once: this call only; chat: this tool in this conversation; server: this tool on its server, everywhere.
ApprovalScope = Literal["once", "chat", "server"]
#: user: a person pressed a button; grant: a chat or server grant answered; policy: the mode is ``never``;
#: stop: the turn was stopped while it waited; restart: the app restarted while it waited.
ApprovalBy = Literal["user", "grant", "policy", "stop", "restart"]


@dataclass(frozen=True, kw_only=True, slots=True)
class ApprovalAsked(Event):
    """A tool call waits for a person's Run or Skip."""

    KIND: ClassVar[str] = "approval_asked"
    FLAGS: ClassVar[Flags] = Flags(attempt=True, urgent=False, prompt=True, listed=False, late_phase=True)
    attempt_id: str
    call_id: str
    server: str
    tool: str  # the tool's name on its server
    mode: ApprovalMode
    why: ApprovalWhy
    grant_hash: str  # sha256 of the tool's name, description and input schema (canonical JSON)


@dataclass(frozen=True, kw_only=True, slots=True)
class ApprovalGiven(Event):
    """The answer to a tool call's approval: who gave it, how far it reaches, for which version of the tool."""

    KIND: ClassVar[str] = "approval_given"
    FLAGS: ClassVar[Flags] = Flags(attempt=True, urgent=False, prompt=True, listed=False, late_phase=True)
    attempt_id: str
    call_id: str
    server: str
    tool: str
    decision: ApprovalDecision
    scope: ApprovalScope = "once"
    by: ApprovalBy = "user"
    grant_hash: str = ""
    actor: str | None = None  # team mode: who did it (stamped on append from ``engine.people.acting``)


@dataclass(frozen=True, kw_only=True, slots=True)
class GrantRevoked(Event):
    """A person took back an "always allow": the next call of the tool asks again."""

    KIND: ClassVar[str] = "grant_revoked"
    FLAGS: ClassVar[Flags] = Flags(attempt=False, urgent=False, prompt=True, listed=False, late_phase=False)
    server: str
    tool: str
    scope: ApprovalScope = "chat"
    grant_hash: str = ""
    actor: str | None = None  # team mode: who did it (stamped on append from ``engine.people.acting``)


ApprovalEvent = ApprovalAsked | ApprovalGiven | GrantRevoked
