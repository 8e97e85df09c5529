"""Team mode at the front door (``--accounts local``): who a request is, the sign-in page, and signing out.

Guarantees:
- ``TeamDoor.person`` reads the session cookie (``COOKIE``) and answers from ``engine.people``'s cache, reading
  the store on a worker thread only for a session it has not seen within a second: the event loop never waits on
  the store for it.
- ``GET /signin`` is a page of its own (no script, nothing loaded from anywhere) with fields labelled "Username" and
  "Password" and a "Sign in" button; ``POST /signin`` checks them on a worker thread (argon2id is slow on purpose)
  and, when they match, makes a new session (no fixation; the browser's previous one ends), sets its cookie
  (HttpOnly, SameSite=Lax, Secure behind HTTPS, never readable by the page) and goes on to ``next`` (a path of this
  server only). ``TeamDoor.signed_in`` is that one ending: the provider's callback and a one-time password link
  (``ui.reset_page``, which also shows its page in the door's look: ``door_page``) end the same way.
- A wrong name and a wrong password get the same sentence (``engine.people.WRONG``); refusals are counted per
  address (``ui.access.peer_key``) and per account, and after ``ui.access.MAX_FAILURES`` within a minute either
  is answered "try again in N s" (429) — after the check, so a correct password is never refused by the limit.
- ``POST /signout`` ends the session (``everywhere=1``: every session of its account), clears the cookie and goes
  to the sign-in page. Bodies over ``MAX_BODY`` bytes are refused (413) before they are read whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
from urllib.parse import parse_qsl, quote

from starlette.datastructures import Headers
from starlette.requests import cookie_parser
from starlette.types import Receive, Scope, Send

from engine.people import ABSOLUTE, People, PeopleError, Person, SignedIn
from ledger.errors import StoreError
from ui.access import FailedAttempts, peer_key
from ui.oidc import CALLBACK, PENDING, PENDING_SECONDS, START, OidcDoor, OidcRefused

COOKIE = "lc_session"
HASHING = asyncio.Semaphore(2)  # password checks at once (each is argon2id: memory and CPU on purpose)
SIGN_IN, SIGN_OUT = "/signin", "/signout"
MAX_BODY = 16_384
HEAD = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · Ledger Chat</title>
<style>
body {{ font: 16px/1.5 system-ui, sans-serif; margin: 0; display: grid; place-items: center; min-height: 100vh;
  background: #f6f6f4; color: #1d1d1b; }}
main {{ width: min(22rem, 90vw); padding: 2rem; background: #fff; border-radius: 12px;
  box-shadow: 0 1px 4px rgb(0 0 0 / 12%); }}
h1 {{ font-size: 1.3rem; margin: 0 0 1rem; }}
label {{ display: block; margin: .8rem 0 .2rem; font-weight: 600; }}
input {{ width: 100%; box-sizing: border-box; padding: .55rem; font: inherit; border: 1px solid #8a8a86;
  border-radius: 6px; }}
.lc-provider {{ display: block; text-align: center; text-decoration: none; }}
button, .lc-provider {{ margin-top: 1.2rem; width: 100%; padding: .6rem; font: inherit; font-weight: 600; color: #fff;
  background: #2b5fb3; border: 0; border-radius: 6px; cursor: pointer; }}
.lc-error {{ color: #a3201c; margin: .8rem 0 0; }}
@media (prefers-color-scheme: dark) {{ body {{ background: #161615; color: #eee; }}
  main {{ background: #222220; }} input {{ background: #161615; color: #eee; }} .lc-error {{ color: #ff8a80; }} }}
</style></head>
<body><main><h1>{heading}</h1>
"""  # the look of every page of the door (sign-in, provider, password link): no script, nothing loaded
PAGE = """<form method="post" action="/signin">
<input type="hidden" name="next" value="{next}">
<label for="username">Username</label>
<input id="username" name="username" autocomplete="username" autocapitalize="none" required autofocus value="{name}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
{error}<button type="submit">Sign in</button>
</form>
"""


class TeamDoor:
    def __init__(self, people: People, oidc: OidcDoor | None = None) -> None:
        self.people, self.oidc = people, oidc  # ``oidc``: --accounts oidc (``ui.oidc``), no password form
        self.failures = FailedAttempts()

    async def person(self, headers: Headers) -> tuple[Person | None, str | None]:
        """(who holds the request's session, the cookie): (None, …) for none, an ended or an expired one."""
        cookie = cookie_parser(headers.get("cookie", "")).get(COOKIE)
        if not cookie:
            return None, None
        known, person = self.people.cached(cookie)
        if not known:
            person = await asyncio.to_thread(self.people.session, cookie)
        return person, cookie

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        """``/signin`` (GET, POST) and ``/signout`` (POST); any other method: 405."""
        method, path = scope.get("method", "GET"), scope["path"]
        wanted = local_path(dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"))).get("next", "/"))
        if self.oidc is not None and path in (START, CALLBACK) and method == "GET":
            await self._oidc(self.oidc, scope, send, path, wanted)
            return
        if path == SIGN_IN and method in ("GET", "HEAD"):
            await (_provider_page(send, 200, self.oidc, wanted) if self.oidc else _page(send, 200, wanted))
            return
        password_form = path == SIGN_IN and self.oidc is None  # with a provider, no password signs anyone in
        if method != "POST" or not (password_form or path == SIGN_OUT):
            await respond(send, 404 if path not in (SIGN_IN, SIGN_OUT) else 405, "Use the sign-in page.", "text/plain")
            return
        form = await read_form(receive, Headers(scope=scope))
        if form is None:
            await respond(send, 413, "That form is too large.", "text/plain; charset=utf-8")
            return
        if path == SIGN_OUT:
            cookie = cookie_parser(Headers(scope=scope).get("cookie", "")).get(COOKIE)
            if cookie:
                everywhere = form.get("everywhere") == "1"
                try:
                    await asyncio.to_thread(self.people.sign_out, cookie, everywhere=everywhere)
                except StoreError as exc:
                    await respond(send, 503, f"Signing out cannot be saved just now ({exc}); try again.", "text/plain")
                    return
            await _redirect(send, SIGN_IN, _cookie(COOKIE, "", scope, age=0))
            return
        await self._sign_in(scope, send, form)

    async def _oidc(self, oidc: OidcDoor, scope: Scope, send: Send, path: str, wanted: str) -> None:
        gone = _cookie(PENDING, "", scope, path=START, age=0)
        try:
            if path == START:
                address, pending = await oidc.start(scope, wanted)
                cookie = _cookie(PENDING, pending, scope, path=START, age=PENDING_SECONDS)
                # the provider's address goes as Authlib made it (its query's "+" must stay a "+")
                await respond(send, 303, "", "text/plain", [("location", address), ("set-cookie", cookie)])
                return
            signed, then = await oidc.finish(scope)
        except OidcRefused as refused:
            await _provider_page(send, 401, oidc, "/", str(refused), [("set-cookie", gone)])
            return
        await self.signed_in(scope, send, signed, local_path(then), gone)

    async def _sign_in(self, scope: Scope, send: Send, form: dict[str, str]) -> None:
        name, password, wanted = form.get("username", ""), form.get("password", ""), local_path(form.get("next", "/"))
        peer = peer_key((scope.get("client") or ("unknown",))[0])
        try:
            async with HASHING:  # argon2id costs 64 MiB and tens of ms: a flood of tries never starves the app
                signed = await asyncio.to_thread(self.people.sign_in, name, password)
        except StoreError as exc:
            await _page(send, 503, wanted, name, f"Sign-in cannot be checked just now ({exc}); try again.")
            return
        except PeopleError as refused:
            account = f"account:{name.strip().lower()}"
            wait = max(self.failures.blocked(peer), self.failures.blocked(account))
            if wait:
                await _page(send, 429, wanted, name, f"Too many failed sign-ins; try again in {wait:.0f} s.")
                return
            self.failures.record(peer)
            self.failures.record(account)
            await _page(send, 401, wanted, name, str(refused))
            return
        await self.signed_in(scope, send, signed, wanted)

    async def signed_in(self, scope: Scope, send: Send, signed: SignedIn, to: str, *cookies: str) -> None:
        """End the session this browser held before (its old cookie never works again), set the new one's
        cookie (and ``cookies``) and go on to ``to``."""
        old = cookie_parser(Headers(scope=scope).get("cookie", "")).get(COOKIE)
        if old:
            with contextlib.suppress(StoreError):  # the new session stands; the old one still expires
                await asyncio.to_thread(self.people.sign_out, old)
        age = int(ABSOLUTE.total_seconds())
        await _redirect(send, to, _cookie(COOKIE, signed.cookie, scope, age=age), *cookies)


def local_path(wanted: str) -> str:
    """``wanted`` when it is a path of this server (``/…``, not ``//…`` nor ``/\\…``), else ``/``."""
    ok = wanted.startswith("/") and not wanted.startswith(("//", "/\\")) and wanted.isprintable()
    return wanted if ok else "/"


def sign_in_address(path: str, query: bytes) -> str:
    """Where a page load without a session is sent: the sign-in page, then back to ``path``."""
    back = path + (f"?{query.decode('latin-1')}" if query else "")
    return f"{SIGN_IN}?next={quote(local_path(back), safe='')}"


async def read_form(receive: Receive, headers: Headers) -> dict[str, str] | None:
    if int(headers.get("content-length") or 0) > MAX_BODY:
        return None
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if len(body) > MAX_BODY:
            return None
        if not message.get("more_body"):
            break
    return dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))


def _secure(scope: Scope) -> str:
    return "; Secure" if scope.get("scheme") == "https" else ""


async def _page(send: Send, status: int, wanted: str, name: str = "", error: str = "") -> None:
    page = PAGE.format(next=html.escape(wanted, quote=True), name=html.escape(name, quote=True), error=alert(error))
    await respond(send, status, door_page("Sign in", "Sign in to Ledger Chat", page), "text/html; charset=utf-8")


async def _provider_page(
    send: Send, status: int, oidc: OidcDoor, wanted: str, error: str = "", extra: list[tuple[str, str]] | None = None
) -> None:
    """The sign-in page of ``--accounts oidc``: one button to the provider, and why the last try failed."""
    target = html.escape(f"{START}?next={quote(wanted, safe='')}", quote=True)
    provider = html.escape(oidc.settings.provider_name)
    button = f'{alert(error)}<p><a class="lc-provider" href="{target}">Sign in with {provider}</a></p>\n'
    body = door_page("Sign in", "Sign in to Ledger Chat", button)
    await respond(send, status, body, "text/html; charset=utf-8", extra)


def door_page(title: str, heading: str, body: str) -> str:
    """A whole page of the door: ``HEAD`` with ``title`` and ``heading`` (plain text), then ``body`` (HTML)."""
    return HEAD.format(title=html.escape(title), heading=html.escape(heading)) + body + "</main></body></html>\n"


def alert(error: str) -> str:
    """``error`` (plain text) as the page's alert paragraph; nothing when there is none."""
    return f'<p class="lc-error" role="alert">{html.escape(error)}</p>\n' if error else ""


def _cookie(name: str, value: str, scope: Scope, *, age: int, path: str = "/") -> str:
    """One ``Set-Cookie`` value of the sign-in: HttpOnly, SameSite=Lax, Secure behind HTTPS; ``age`` 0 clears it."""
    return f"{name}={value}; Path={path}; Max-Age={age}; HttpOnly; SameSite=Lax{_secure(scope)}"


async def _redirect(send: Send, to: str, *cookies: str) -> None:
    """303 to ``to`` (any character of it fits the header) with ``cookies`` set."""
    headers = [("location", quote(to, safe="/?=&%:")), *(("set-cookie", c) for c in cookies)]
    await respond(send, 303, "", "text/plain", headers)


async def respond(send: Send, status: int, body: str, media: str, extra: list[tuple[str, str]] | None = None) -> None:
    """(``ui.guard`` adds the security headers to every answer that passes it, these included.)"""
    payload = body.encode("utf-8")
    headers = [("content-type", media), ("content-length", str(len(payload))), ("cache-control", "no-store")]
    start = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in (*headers, *(extra or []))]
    await send({"type": "http.response.start", "status": status, "headers": start})
    await send({"type": "http.response.body", "body": payload})
