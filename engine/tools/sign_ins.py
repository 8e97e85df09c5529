"""The sign-ins to remote tool servers that wait for the browser to come back (``/oauth/callback``), by their OAuth
``state``; on several instances on one database, the callback may come back to another instance than the one
waiting.

Guarantees:
- ``expect`` registers a sign-in (its person, its server) and returns the future the sign-in waits on; ``drop``
  forgets it. ``holds(state)`` is whether a sign-in with that ``state`` waits here now.
- ``arrive`` hands a waiting sign-in its code (or the server's refusal) once, only for the person who started it
  (team mode; ``None`` for the one person of a personal app), and returns (taken, what to tell the person): a
  callback for another person's sign-in is refused and leaves the sign-in waiting; a ``state`` not waiting here
  says so.
- ``arrive_anywhere`` is what the callback route calls: a ``state`` waiting here is ``arrive``; else, when this
  instance has others (``elsewhere``, set by ``app.cluster``), the callback is handed to them and their answer
  (the holder's own ``arrive``, within ``elsewhere``'s bounded wait) is returned; with no other instance, or none
  holding it, the words of a ``state`` not waiting. Without ``elsewhere`` (one instance) it is exactly ``arrive``.
- The code is never logged or kept here: it goes into the waiting sign-in's future and nowhere else.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from mcp.shared.auth import AuthorizationCodeResult

from engine.tools.oauth_words import refused_at_callback

Arrival = tuple[bool, str]  # (whether a waiting sign-in took the callback, what to tell the person)
Elsewhere = Callable[[dict[str, str], str | None], Awaitable[Arrival | None]]
NOT_WAITING = "This sign-in is not waiting any more (it was finished, cancelled, or the app restarted)."
SOMEONE_ELSE = "This sign-in was started by someone else."


@dataclass(slots=True)
class Pending:
    person: str | None
    server: str
    future: asyncio.Future[AuthorizationCodeResult] = field(repr=False)


class SignIns:
    """Sign-ins waiting for the browser to come back (see the module's guarantees)."""

    def __init__(self) -> None:
        self._waiting: dict[str, Pending] = {}
        self.elsewhere: Elsewhere | None = None  # the other instances on the database (``app.cluster``)

    def expect(self, state: str, person: str | None, server: str) -> asyncio.Future[AuthorizationCodeResult]:
        future: asyncio.Future[AuthorizationCodeResult] = asyncio.get_running_loop().create_future()
        self._waiting[state] = Pending(person, server, future)
        return future

    def drop(self, state: str) -> None:
        self._waiting.pop(state, None)

    def holds(self, state: str) -> bool:
        pending = self._waiting.get(state)
        return pending is not None and not pending.future.done()

    def waits_for(self, person: str | None, server: str) -> bool:
        """Whether a sign-in of ``person`` to ``server`` waits for the browser here."""
        return any(p.person == person and p.server == server and not p.future.done() for p in self._waiting.values())

    def arrive(self, query: dict[str, str], person: str | None) -> Arrival:
        """The callback's query; (whether a waiting sign-in took it, what to tell the person)."""
        state = query.get("state", "")
        pending = self._waiting.get(state)
        if pending is None or pending.future.done():
            return False, NOT_WAITING
        if pending.person is not None and pending.person != person:
            return False, SOMEONE_ELSE
        del self._waiting[state]
        if query.get("error"):
            pending.future.set_exception(refused_at_callback(pending.server, query))
            return True, f"{pending.server} refused the sign-in: {query['error']}. Back in the chat, the call says so."
        code = AuthorizationCodeResult(code=query.get("code", ""), state=state, iss=query.get("iss"))
        pending.future.set_result(code)
        return True, f"Signed in to {pending.server}. You can close this tab: the chat goes on."

    async def arrive_anywhere(self, query: dict[str, str], person: str | None) -> Arrival:
        """``arrive`` here, or at the instance holding the sign-in (see the module's guarantees)."""
        if self.elsewhere is None or self.holds(query.get("state", "")):
            return self.arrive(query, person)
        answer = await self.elsewhere(query, person)
        return answer if answer is not None else (False, NOT_WAITING)
