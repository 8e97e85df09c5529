"""A remote tool server's sign-in coming back to another instance than the one waiting for it (several instances
on one PostgreSQL, behind a balancer without sticky sessions).

Guarantees:
- ``ask`` (``SignIns.elsewhere`` of this instance, set by ``attach``) is called by ``/oauth/callback`` when no
  sign-in with the callback's ``state`` waits here: it sends the callback (``state``, ``code``, ``iss``,
  ``error``, and the signed-in person in team mode) to every other instance (``NOTIFY ledger_requests``, kind
  ``sign_in``, with a nonce) and waits up to ``WITHIN`` s for the answer of the instance holding it; it returns
  that answer (taken, its words), or None when none answered in time (or the database could not be reached).
- ``serve`` (on the loop, for requests of kind ``sign_in`` and ``sign_in_answer``): an instance holding the
  sign-in takes the callback exactly as if the browser had come there (``SignIns.arrive``: the same person check,
  so another person's sign-in is refused and keeps waiting) and sends its answer (never the code) back to the
  sender with the nonce; an instance not holding it ignores it; an answer settles only the wait it names, once.
- The code travels only in the NOTIFY payload (not stored by PostgreSQL once delivered); it is never logged, put
  in a table or in the ledger. A failure to send is logged without the payload.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable, Coroutine
from typing import Any

from engine.tools import SignIns
from ledger.errors import StoreError
from store.postgres import EVERYONE, AttemptOwners, Request

log = logging.getLogger("ledger_chat.cluster")
WITHIN = 4.0  # seconds the answering instance waits for the holder of a sign-in to say it took the callback
KINDS = ("sign_in", "sign_in_answer")
FIELDS = ("state", "code", "iss", "error")


class SignInRelay:
    """This instance's side of callbacks that arrive at the wrong instance (see the module's guarantees)."""

    def __init__(
        self,
        owners: AttemptOwners,
        spawn: Callable[[Coroutine[Any, Any, None], str], object],
        *,
        within: float = WITHIN,
    ) -> None:
        self.owners, self.spawn, self.within = owners, spawn, within
        self.signins: SignIns | None = None
        self._waits: dict[str, asyncio.Future[tuple[bool, str]]] = {}

    def attach(self, signins: SignIns) -> None:
        """Take callbacks for ``signins`` from the other instances, and hand theirs on to them."""
        self.signins = signins
        signins.elsewhere = self.ask

    async def ask(self, query: dict[str, str], person: str | None) -> tuple[bool, str] | None:
        nonce = secrets.token_urlsafe(16)
        waiting: asyncio.Future[tuple[bool, str]] = asyncio.get_running_loop().create_future()
        self._waits[nonce] = waiting
        callback = {k: str(v) for k, v in query.items() if k in FIELDS}
        request: Request = {"kind": "sign_in", "nonce": nonce, "query": callback, "actor": person}
        try:
            await asyncio.to_thread(self.owners.request, EVERYONE, request)
            return await asyncio.wait_for(waiting, self.within)
        except StoreError as exc:
            log.warning("a sign-in's callback could not be handed to the other instances: %s", exc)
            return None
        except TimeoutError:
            return None
        finally:
            self._waits.pop(nonce, None)

    def serve(self, request: Request) -> bool:
        """On the loop: True if the request was a sign-in's (served here, or ignored as not ours)."""
        kind = request.get("kind")
        if kind == "sign_in_answer":
            waiting = self._waits.get(str(request.get("nonce")))
            if waiting is not None and not waiting.done():
                waiting.set_result((request.get("taken") is True, str(request.get("words", ""))))
            return True
        if kind != "sign_in":
            return False
        query = request.get("query")
        if not isinstance(query, dict) or self.signins is None or not self.signins.holds(str(query.get("state"))):
            return True  # not waiting here: the instance holding it answers
        actor = request.get("actor") if isinstance(request.get("actor"), str) else None
        taken, words = self.signins.arrive({k: str(v) for k, v in query.items() if k in FIELDS}, actor)
        answer: Request = {"kind": "sign_in_answer", "nonce": request.get("nonce"), "taken": taken, "words": words}
        self.spawn(self._send(str(request.get("from")), answer), "a sign-in's answer to the instance that asked")
        return True

    async def _send(self, to: str, answer: Request) -> None:
        try:
            await asyncio.to_thread(self.owners.request, to, answer)
        except StoreError as exc:
            log.warning("a sign-in's answer could not be sent to the instance that asked: %s", exc)
