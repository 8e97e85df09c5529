"""One-time password links at the front door (``/signin/reset/<token>``, ``--accounts local``).

Guarantees:
- ``GET`` shows, while the link holds, a page in the door's own look (``ui.signin.HEAD``: no script, nothing
  loaded) with fields labelled "New password" and "Repeat the password" and a "Set the password" button. An
  unknown, used or expired link (or one whose account was disabled since) gets 404 and the one sentence
  ``engine.people.LINK_GONE``: the same page for each, so it never says which.
- ``POST`` (its ``Origin`` checked by ``ui.guard`` as for every request, the sign-in form's included; a body over
  ``ui.signin.MAX_BODY`` refused) sets the password when the two fields agree and ``password_problem`` has none
  (else the form again with the sentence, and the link still holds), ends every session of the account, signs this
  browser in the way the sign-in does (``TeamDoor.signed_in``: a new session and its cookie, the browser's previous
  session ended) and goes to ``/``.
- Links that do not hold are counted per address (``ui.access.FailedAttempts``); after ``MAX_FAILURES`` within a
  minute the answer is "try again in N s" (429), given only after the check, so a link that holds is never refused
  by it. Hashing waits for ``ui.signin.HASHING`` (two at once at most); the store is read off the event loop.
- With a provider (``--accounts oidc``) no link holds: no password signs anyone in there. The token is never logged
  (only its sha256 is stored: ``engine.people.ResetLinks``).
"""

from __future__ import annotations

import asyncio
import re

from starlette.datastructures import Headers
from starlette.types import Receive, Scope, Send

from engine.people import LINK_GONE, LinkGone, PeopleError, ResetLinks
from ledger.errors import StoreError
from ui.access import FailedAttempts, peer_key
from ui.signin import HASHING, TeamDoor, alert, door_page, read_form, respond

RESET = "/signin/reset/"  # + the token: the address a link of ``main.py users reset`` or the accounts page opens
TOKEN = re.compile(r"[A-Za-z0-9_-]{16,128}")  # what ``secrets.token_urlsafe`` makes (anything else holds no link)
TITLE, HEADING = "New password", "Set a new password"
FORM = """<form method="post">
<label for="password">New password</label>
<input id="password" name="password" type="password" autocomplete="new-password" required autofocus>
<label for="repeat">Repeat the password</label>
<input id="repeat" name="repeat" type="password" autocomplete="new-password" required>
{error}<button type="submit">Set the password</button>
</form>
"""
HTML = "text/html; charset=utf-8"


class ResetDoor:
    """Serves ``RESET`` + token for ``ui.guard`` (which lets it through without a session, like ``/signin``)."""

    def __init__(self, door: TeamDoor) -> None:
        self.door, self.links = door, ResetLinks(door.people)
        self.failures = FailedAttempts()

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        method, token = scope.get("method", "GET"), scope["path"][len(RESET) :]
        if method not in ("GET", "HEAD", "POST"):
            await respond(send, 405, "Open the link in a browser.", "text/plain; charset=utf-8")
            return
        try:
            holds = await self._holds(token)
        except StoreError as exc:
            await _sentence(send, 503, f"The link cannot be checked just now ({exc}); try again in a moment.")
            return
        if not holds:
            await self._gone(scope, send)
            return
        if method != "POST":
            await _form(send, 200)
            return
        form = await read_form(receive, Headers(scope=scope))
        if form is None:
            await respond(send, 413, "That form is too large.", "text/plain; charset=utf-8")
            return
        password = form.get("password", "")
        if password != form.get("repeat", ""):
            await _form(send, 400, "The two passwords are not the same; type them again.")
            return
        try:
            async with HASHING:  # argon2id, as at the sign-in: a flood of posts never starves the app
                signed = await asyncio.to_thread(self.links.use, token, password)
        except LinkGone:
            await self._gone(scope, send)
            return
        except StoreError as exc:
            await _form(send, 503, f"The password cannot be saved just now ({exc}); try again.")
            return
        except PeopleError as refused:
            await _form(send, 400, str(refused))
            return
        await self.door.signed_in(scope, send, signed, "/")

    async def _holds(self, token: str) -> bool:
        if self.door.oidc is not None or not TOKEN.fullmatch(token):
            return False
        return await asyncio.to_thread(self.links.holds, token)

    async def _gone(self, scope: Scope, send: Send) -> None:
        """The one answer for an unknown, used or expired link; "wait" after too many from one address."""
        peer = peer_key((scope.get("client") or ("unknown",))[0])
        wait = self.failures.blocked(peer)
        if wait:
            await _sentence(send, 429, f"Too many links that do not work; try again in {wait:.0f} s.")
            return
        self.failures.record(peer)
        await _sentence(send, 404, LINK_GONE)


async def _form(send: Send, status: int, error: str = "") -> None:
    await respond(send, status, door_page(TITLE, HEADING, FORM.format(error=alert(error))), HTML)


async def _sentence(send: Send, status: int, text: str) -> None:
    await respond(send, status, door_page(TITLE, HEADING, alert(text)), HTML)
