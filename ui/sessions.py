"""Team mode's pages held to their sessions: each page remembers the session it was opened with; a socket event
acts for that person only while the session holds; an ended session's pages go to the sign-in page, and a disabled
account's running answers are stopped.

Guarantees:
- ``track()`` (every page, as it is built) ties the page's client to the session cookie of its request.
- ``acting_for(client)`` is what ``ui.socket_owner`` asks before handing a socket event to NiceGUI: the person the
  event acts for (``engine.people.acting`` is set to it while the event runs, and tasks it starts keep it), or
  ``ENDED`` when the page's session is known to have ended (the event is dropped). Personal mode: ``None``.
- ``SessionSweep.sweep`` (every ``EVERY`` s): re-reads the sessions in use off the event loop; sends each page
  whose session ended (signed out, signed out everywhere, disabled, expired) to the sign-in page; stops, through
  the one cancel path with source ``account``, every answer running here in a conversation whose owner's account
  is disabled or gone (the delivered prefix is kept, as with any Stop; the queue waits). So a disabled account is
  out within ``EVERY`` + ``engine.people.people.FRESH`` s on every instance that serves it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Final

from nicegui import Client, ui

from engine.people import People
from ui.context import PageContext
from ui.signin import COOKIE, SIGN_IN

log = logging.getLogger("ledger_chat.access")
ENDED: Final = "ended"
_PAGES: dict[str, str] = {}  # client id -> the session cookie its page was opened with
_PEOPLE: list[People] = []


def track(context: PageContext) -> None:
    """Tie the page being built to its request's session (team mode; nothing in personal mode)."""
    if context.people is None:
        return
    client = ui.context.client
    cookie = client.request.cookies.get(COOKIE)
    if cookie:
        _PAGES[client.id] = cookie


def acting_for(client: Any) -> str | None:
    """The person a socket event of ``client``'s page acts for; ``ENDED`` when its session ended; None: personal."""
    if not _PEOPLE:
        return None
    cookie = _PAGES.get(getattr(client, "id", ""))
    if cookie is None:
        return ENDED  # team mode, and a page no session opened: nothing acts
    known, person = _PEOPLE[0].cached(cookie)
    if not known:  # the sweep re-reads it within a second; until then the last answer stands
        person = _PEOPLE[0].last(cookie)
    return person.id if person is not None else ENDED


class SessionSweep:
    EVERY = 1.0

    def __init__(self, people: People, context: PageContext) -> None:
        """Made once at start-up in team mode: from then on every socket event is held to its page's session."""
        self.people, self.context = people, context
        self._busy = False
        _PEOPLE[:] = [people]

    async def sweep(self) -> None:
        if self._busy:  # a slow store: one sweep at a time
            return
        self._busy = True
        try:
            await asyncio.to_thread(self.people.refresh)
            self._send_ended_pages_away()
            engine = self.context.engine
            running = engine.streaming_here() if engine is not None else []
            if not running or engine is None:
                return
            accounts = await asyncio.to_thread(self.people.store.accounts)
            by_person = {a.person: a for a in accounts.values()}  # local:<name> and oidc:<hash> alike
            for cid in running:
                _, owner = engine.owner(cid)
                if owner is None:  # made in personal mode: nobody's account
                    continue
                account = by_person.get(owner)
                if account is None or account.disabled:
                    log.warning("stopping the answer in %s: the account %s is disabled", cid, owner)
                    await engine.cancel(cid, "account")
        except Exception:  # noqa: BLE001 - a store that does not answer now is asked again next time
            log.exception("the session sweep failed; it runs again in %s s", self.EVERY)
        finally:
            self._busy = False

    def _send_ended_pages_away(self) -> None:
        for client_id, cookie in list(_PAGES.items()):
            client = Client.instances.get(client_id)
            if client is None or client.is_deleted:
                _PAGES.pop(client_id, None)
                continue
            known, person = self.people.cached(cookie)
            if known and person is None:
                _PAGES.pop(client_id, None)
                with client:
                    ui.navigate.to(SIGN_IN)
