"""The multi-instance protocol, seen from one engine: ``Peers`` (the other instances on the same database) and
``Local`` (what they may ask of this engine). One process alone has ``ALONE``, the null object.

Guarantees:
- The engine asks ``Peers`` three things, always the same way, with or without other instances: which attempt
  another instance streams in a conversation (``streaming``: never loads a conversation when alone), to cancel
  it through its owner (``cancel``, with its attempt id and turn, so a late request never touches a newer
  attempt; True once the attempt ended) and to wait until this instance may write the conversation
  (``writable``); and to pass a person's answer to a call waiting for approval to the attempt's owner
  (``answer``). ``ALONE`` answers None, False and at once: no engine code tests for other instances.
- Before an attempt's ``started`` (and its user message) is appended, the engine ``claim``s the attempt: a claim
  that fails raises ``InputRejected`` with a sentence saying why, and nothing is appended, so the attempt never
  runs without an owner. ``ALONE`` always grants it. ``unclaim`` gives back a claim whose attempt did not start.
- ``relay`` hands an event this instance could not write (another instance holds the conversation's write lease:
  ``ConversationBusyError.writer``) to that instance, which appends it (``app.peer_requests``: a share link's
  revoke or opens only); True once sent. ``ALONE`` has no one to send it to: False.
- ``Local`` is everything the cluster (``app.cluster``) uses of the engine: its read side and methods named for
  what the cluster needs (no settings). ``engine.commands.engine.Engine`` is one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Coroutine
from dataclasses import dataclass
from typing import Any, Protocol

from engine.read import ReadSide
from ledger.decide import InputRejected as InputRejected
from ledger.events import AnyEvent, ApprovalScope, CancelSource
from ledger.state import ConversationState


@dataclass(frozen=True, slots=True)
class LiveElsewhere:
    """An attempt another instance streams: its id and the turn it answers."""

    attempt_id: str
    turn: int


class Peers(Protocol):
    def streaming(self, cid: str) -> LiveElsewhere | None:
        """The attempt another instance streams in this conversation (this instance runs none in it)."""

    async def cancel(self, cid: str, live: LiveElsewhere, source: CancelSource, keep_partial: bool) -> bool:
        """Cancel ``live`` through its owner; True once this engine folded its end (False if unreachable)."""

    async def writable(self, cid: str) -> None:
        """Wait (briefly) until this instance may write the conversation: another may still be writing its end."""

    async def claim(self, cid: str, attempt_id: str) -> None:
        """Own this new attempt before it starts; raises ``InputRejected`` (saying why) when it cannot be owned."""

    def unclaim(self, attempt_id: str) -> None:
        """Give back a claim whose attempt was not started after all."""

    async def answer(self, cid: str, live: LiveElsewhere, call_id: str, run_it: bool, scope: ApprovalScope) -> None:
        """Send a person's answer to a call that waits for approval in ``live`` to its owner (the first answer
        the owner gets wins there; a late one is dropped)."""

    async def reply(self, cid: str, live: LiveElsewhere, question_id: str, action: str, content: Any) -> None:
        """Send a person's answer to a tool's question in ``live`` to its owner (the same rule)."""

    async def relay(self, event: AnyEvent, writer: str | None) -> bool:
        """Send ``event`` to ``writer``, the instance writing its conversation, to append; True once sent."""


class Alone:
    """One instance on its store: nobody else streams, cancels or writes."""

    def streaming(self, cid: str) -> LiveElsewhere | None:
        return None

    async def cancel(self, cid: str, live: LiveElsewhere, source: CancelSource, keep_partial: bool) -> bool:
        return False

    async def writable(self, cid: str) -> None:
        return None

    async def claim(self, cid: str, attempt_id: str) -> None:
        return None

    def unclaim(self, attempt_id: str) -> None:
        return None

    async def answer(self, cid: str, live: LiveElsewhere, call_id: str, run_it: bool, scope: ApprovalScope) -> None:
        return None

    async def reply(self, cid: str, live: LiveElsewhere, question_id: str, action: str, content: Any) -> None:
        return None

    async def relay(self, event: AnyEvent, writer: str | None) -> bool:
        return False


ALONE = Alone()


class Local(Protocol):
    """This instance's engine, as the other instances see it (through ``app.cluster``)."""

    @property
    def read(self) -> ReadSide:
        """Its read side: ``subscribe``, ``absorb`` (events another instance stored, never appended again),
        ``loaded``, ``flush``."""

    def conversation(self, cid: str) -> ConversationState | None: ...

    def is_running_here(self, cid: str) -> bool: ...

    def decide_tool(self, cid: str, call_id: str, run_it: bool, scope: ApprovalScope = "once") -> None:
        """A person's answer to a call waiting for approval here (``InputRejected`` when none waits)."""

    def answer_question(self, cid: str, question_id: str, action: Any, content: Any) -> None:
        """A person's answer to a tool's question here (``InputRejected``, or ``ValueError`` for invalid values)."""

    def viewer_count(self, cid: str) -> int: ...

    async def cancel(
        self,
        cid: str,
        source: CancelSource,
        *,
        keep_partial: bool = True,
        turn: int | None = None,
        attempt_id: str | None = None,
        requested_by: str | None = None,
    ) -> bool:
        """The one cancel path."""

    def lost(self, cid: str, attempt_ids: Collection[str]) -> None:
        """These attempts' owner claims are gone: stop them here without an end; read the conversation again."""

    def recover(self, only: Collection[str] | None = None) -> list[str]:
        """End, as interrupted, the live attempts of these conversations (their owner is gone)."""

    def spawn(self, coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        """Start background work the way the app does."""
