"""The front door: every HTTP request and websocket passes here before NiceGUI sees it (a pure ASGI middleware).

Guarantees (the rules themselves are ``ui.access``):
- A Host that is not allowed (or not well-formed) gets 403, and so does any request or websocket handshake whose
  ``Origin`` is not exactly this server (scheme, host and port), and every websocket handshake without an
  ``Origin`` (every browser sends one; a script must say where it comes from too), in every mode.
- The client address is the TCP peer's: uvicorn rewrites it from ``X-Forwarded-For`` only for proxies named with
  ``--forwarded-allow-ips`` (``app.serve``; default none), so a made-up header changes nothing here.
- With a token, every page, static file, websocket (NiceGUI's socket.io under ``/_nicegui_ws``, polling and
  upgrade), download and export needs the cookie or ``Authorization: Bearer <token>``; ``?token=<token>`` counts
  only on a page load (a GET or HEAD a browser navigates, ``Sec-Fetch-Mode: navigate`` or ``Accept: text/html``),
  which sets the cookie (HttpOnly, SameSite=Strict) and moves on to the same address without the token. Without
  a token: 401. A wrong token: 401, or 429 once its peer sent ``MAX_FAILURES`` wrong ones within the window;
  the correct token is checked first and never refused by that limit. Wrong tokens are logged with the peer's
  address and the path (the first ``MAX_FAILURES`` per window), never the token.
- A tool server's sign-in coming back (``/oauth/callback``, a cross-site redirect that brings no SameSite=Strict
  cookie) is first answered with a page that loads the same address again from this site (``hop=1``), which
  brings the cookie; then the token is checked as for any page. This app's OAuth client ID metadata document
  (``/oauth/client.json``: public by nature, no secret in it) needs neither token nor sign-in.
- Team mode (``door`` given, ``--accounts local`` or ``oidc``): every route but ``/signin`` and what follows it
  (``/signin/oidc``, its callback, a one-time password link ``/signin/reset/<token>`` served by
  ``ui.reset_page``; and ``/signout``, which ends a session) needs a signed-in person
  (``ui.signin.TeamDoor``), on loopback too, and the token is not asked: a page load without one goes to the sign-in
  page (303, then back), anything else gets 401, a websocket is refused. The person is kept in
  ``scope["state"]["person"]`` and set as the one acting (``engine.people.acting``) for everything the request
  starts. Only the in-process demo model (``/demo``) is reached with the internal token instead (the app's own
  requests to it carry no cookie). When the sessions' store does not answer, nobody is let in: 503 with a sentence.
- A share link's page (``/s/<token>`` and a file of it, ``SHARE_PATH``; ``ui.share_page``) is the one route a
  stranger may reach: it is served with the person, if one is signed in (team mode), or with whether the request
  passed the token check (``scope["state"]["member"]``, personal mode), and the page itself decides (a members-only
  link sends a stranger to sign in). Nothing else under ``/s/`` (``/s/<token>/copy``) and no websocket is let by.
- Every HTTP response (pages, static files, errors, refusals) carries ``SECURITY_HEADERS``; an error raised
  before a response started is answered 500 with them (and still raised, so it is logged). A served file
  (``ui.files_routes``) keeps its own stricter CSP (``default-src 'none'``, sandboxed): it runs nothing.
"""

from __future__ import annotations

import html
import logging
import re
from urllib.parse import parse_qsl, quote, urlencode

from starlette.datastructures import Headers
from starlette.requests import cookie_parser
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from engine.people import set_acting
from ledger.errors import StoreError
from ui.access import AccessPolicy, FailedAttempts, peer_key
from ui.replies import SECURITY_HEADERS as SECURITY_HEADERS
from ui.replies import add_security_headers, hop, refuse, respond
from ui.reset_page import RESET, ResetDoor
from ui.sign_in_card import CALLBACK as OAUTH_CALLBACK
from ui.sign_in_card import CLIENT_DOCUMENT
from ui.signin import SIGN_IN, SIGN_OUT, TeamDoor, sign_in_address

log = logging.getLogger("ledger_chat.access")
SHARE_PATH = re.compile(r"/s/[A-Za-z0-9_-]{1,64}(/files/[0-9a-f]{64})?")  # a share link's page, and its files

NEEDS_TOKEN = (
    "Ledger Chat needs its access token: open the address printed when the server started (it ends in "
    "?token=...), or send the header 'Authorization: Bearer <token>'."
)


class Guard:
    """``app.add_middleware(Guard, policy=...)``: Host, Origin and token checks, and the security headers."""

    def __init__(self, app: ASGIApp, policy: AccessPolicy, door: TeamDoor | None = None) -> None:
        self.app, self.policy, self.door = app, policy, door
        self.reset = ResetDoor(door) if door is not None else None  # one-time password links (ui.reset_page)
        self.failures = FailedAttempts()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        host = headers.get("host")
        if not self.policy.host_allowed(host):
            await refuse(scope, send, 403, "This server does not answer to that host name.")
            return
        origin = headers.get("origin")
        if origin is not None and not self.policy.origin_allowed(origin, host, scope.get("scheme", "http")):
            await refuse(scope, send, 403, "Requests from other sites are refused.")
            return
        if origin is None and scope["type"] == "websocket":
            await refuse(scope, send, 403, "A websocket must say where it comes from (the Origin header).")
            return
        if scope["type"] == "http" and SHARE_PATH.fullmatch(scope.get("path", "")):
            await self._share(scope, receive, send, headers)
            return
        if scope["type"] == "http" and scope.get("path") == CLIENT_DOCUMENT:  # public: authorization servers read it
            await self._serve(scope, receive, send)
            return
        if self.door is not None:
            await self._team(self.door, scope, receive, send, headers)
            return
        if self.policy.token is not None and _back_from_sign_in(scope, headers, self.policy.cookie_name):
            await hop(scope, send)  # a tool server's sign-in came back cross-site: a same-site hop brings the cookie
            return
        if self.policy.token is not None and not await self._token_ok(scope, headers, send):
            return
        await self._serve(scope, receive, send)

    async def _team(self, door: TeamDoor, scope: Scope, receive: Receive, send: Send, headers: Headers) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and path.startswith(RESET) and self.reset is not None:
            await self._serve(scope, receive, send, self.reset.serve)
            return
        if scope["type"] == "http" and (path in (SIGN_IN, SIGN_OUT) or path.startswith(SIGN_IN + "/")):
            await self._serve(scope, receive, send, door.serve)
            return
        if path.startswith("/demo/") and self.policy.token is not None:  # the app's own calls to its demo model
            if await self._token_ok(scope, headers, send):
                await self._serve(scope, receive, send)
            return
        try:
            person, _ = await door.person(headers)
        except StoreError as exc:  # the sessions' store does not answer: nobody is let in, and the page says why
            await refuse(scope, send, 503, f"Sign-in cannot be checked just now ({exc}); try again in a moment.")
            return
        if person is None:
            if scope["type"] == "http" and _is_page_load(scope, headers):
                target = sign_in_address(scope.get("root_path", "") + path, scope.get("query_string", b""))
                await respond(send, 303, "Sign in first.", "text/plain; charset=utf-8", [("location", target)])
            else:
                await refuse(scope, send, 401, "Sign in first: this Ledger Chat is shared by a team.")
            return
        scope.setdefault("state", {})["person"] = person
        # socket.io's own tasks (started by whichever socket came first) act for nobody: each event is set to its
        # page's person by ui.socket_owner
        set_acting(None if path.startswith("/_nicegui_ws") else person.id)
        await self._serve(scope, receive, send)

    async def _share(self, scope: Scope, receive: Receive, send: Send, headers: Headers) -> None:
        """A share link's page: served to anyone, with who they are (see the module's guarantees)."""
        state = scope.setdefault("state", {})
        person = None
        if self.door is not None:
            try:
                person, _ = await self.door.person(headers)
            except StoreError:  # the sessions' store does not answer: read as a stranger (a public link still opens)
                person = None
            if person is not None:
                state["person"] = person
            state["member"] = person is not None
        else:
            state["member"] = self.policy.token is None or self._holds_token(headers)
        set_acting(person.id if person is not None else None)
        await self._serve(scope, receive, send)

    def _holds_token(self, headers: Headers) -> bool:
        """Whether the request carries the access token (its cookie or the header); never answers anything."""
        cookie = cookie_parser(headers.get("cookie", "")).get(self.policy.cookie_name)
        if cookie is not None and self.policy.cookie_matches(cookie):
            return True
        scheme, _, value = headers.get("authorization", "").partition(" ")
        return (
            scheme.lower() in ("bearer", "token") and bool(value.strip()) and self.policy.token_matches(value.strip())
        )

    async def _token_ok(self, scope: Scope, headers: Headers, send: Send) -> bool:
        """Whether the request may go on; when not, the refusal (or the cookie-setting hop) was sent."""
        cookie = cookie_parser(headers.get("cookie", "")).get(self.policy.cookie_name)
        if cookie is not None and self.policy.cookie_matches(cookie):
            return True
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        page_load = scope["type"] == "http" and _is_page_load(scope, headers)
        from_query = next((v for k, v in query if k == "token"), None) if page_load else None
        scheme, _, value = headers.get("authorization", "").partition(" ")
        from_header = value.strip() if scheme.lower() in ("bearer", "token") and value.strip() else None
        presented = from_header if from_header is not None else from_query
        if presented is None:
            await refuse(scope, send, 401, NEEDS_TOKEN)
            return False
        if self.policy.token_matches(presented):  # first: the limit never refuses the right token
            if from_header is None:
                await self._sign_in(scope, send, query)
                return False
            return True
        client = (scope.get("client") or ("unknown",))[0]
        peer = peer_key(client)
        wait = self.failures.blocked(peer)
        if wait:
            await refuse(scope, send, 429, f"Too many wrong tokens from this address; try again in {wait:.0f} s.")
            return False
        count = self.failures.record(peer)
        log.warning(
            "refused a wrong access token from %s for %s %s (%d in the last minute)",
            client,
            scope.get("method", "WEBSOCKET"),
            scope.get("path", ""),
            count,
        )
        await refuse(scope, send, 401, NEEDS_TOKEN)
        return False

    async def _sign_in(self, scope: Scope, send: Send, query: list[tuple[str, str]]) -> None:
        """Set the cookie and go on to the same address without the token (a same-site hop, so that a
        SameSite=Strict cookie is sent even when the link was opened from another site)."""
        rest = urlencode([(k, v) for k, v in query if k != "token"])
        target = quote(scope.get("root_path", "") + scope["path"]) + (f"?{rest}" if rest else "")
        url = html.escape(target, quote=True)
        body = (
            f'<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0; url={url}">'
            f'<title>Ledger Chat</title><p>Signed in. <a href="{url}">Continue to Ledger Chat</a>.</p>'
        )
        secure = "; Secure" if scope.get("scheme") == "https" else ""
        cookie = f"{self.policy.cookie_name}={self.policy.cookie_value}; Path=/; HttpOnly; SameSite=Strict{secure}"
        await respond(
            send, 200, body, "text/html; charset=utf-8", [("set-cookie", cookie), ("cache-control", "no-store")]
        )

    async def _serve(self, scope: Scope, receive: Receive, send: Send, app: ASGIApp | None = None) -> None:
        app = app or self.app
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                add_security_headers(message)
            await send(message)

        try:
            await app(scope, receive, send_with_headers)
        except Exception:
            if not started:
                await respond(send_with_headers, 500, "Internal server error.", "text/plain; charset=utf-8")
            raise


def _back_from_sign_in(scope: Scope, headers: Headers, cookie_name: str) -> bool:
    """A first arrival at ``/oauth/callback`` without the (SameSite=Strict) token cookie."""
    query = scope.get("query_string", b"").decode("latin-1")
    missing = cookie_parser(headers.get("cookie", "")).get(cookie_name) is None
    return scope.get("path") == OAUTH_CALLBACK and scope["type"] == "http" and missing and "hop=1" not in query


def _is_page_load(scope: Scope, headers: Headers) -> bool:
    mode = headers.get("sec-fetch-mode")
    return scope.get("method") in ("GET", "HEAD") and (mode == "navigate" or "text/html" in headers.get("accept", ""))
