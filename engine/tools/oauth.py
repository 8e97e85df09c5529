"""Signing in to a remote tool server as the MCP authorization spec says, through the ``mcp`` SDK's client auth.

Guarantees:
- ``SignInAuth`` is the SDK's ``OAuthClientProvider`` (protected-resource metadata, authorization-server metadata,
  a client ID metadata document or dynamic registration, whichever the server offers, PKCE S256, the ``resource``
  parameter) for one person and one server, with its own handling of every request:
  - a token within ``margin`` of its expiry is refreshed before the request; a request answered 401 refreshes the
    token it was sent with; either refresh happens once at a time per person and server (an ``asyncio.Lock`` per
    key, given by ``engine.tools.remote.RemoteServers``): a request that waited sees the new token and refreshes
    nothing;
  - a refused refresh (or no token) is a sign-in: the SDK's flow sends the request without a token, discovers,
    registers and calls ``_redirect``/``_callback``, which ask the person through the call in flight (the
    ``CallAuth`` of the context: ``ask``, a question of mode ``sign_in``, its deadline paused meanwhile) and
    wait for the callback route (``SignIns.arrive``); a request nobody can be asked for ends without one;
  - a request answered 401 after it was sent with a token (it may have had effects) is sent again only when it
    is not a ``tools/call``, or calls a tool marked read-only (``CallAuth.read_only``); otherwise ``CallAuth.ended``
    says it was not re-sent;
  - whatever ends a sign-in is in ``CallAuth.ended`` as a ``SignInEnded`` with words saying what happened (see
    ``engine.tools.oauth_words``), and the request ends with the server's own 401 (never an exception that would
    end the connection).
- The sign-ins waiting for the browser are ``engine.tools.sign_ins.SignIns``'s, by their ``state``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncGenerator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER

from engine.tools.asking import Action, Question, QuestionAnswer
from engine.tools.elicitation import Ask, Deadline, Elicitations
from engine.tools.oauth_words import SignInEnded, SignInNeeded, ended_by_answer, ended_by_error
from engine.tools.sign_ins import SignIns
from engine.tools.vault import VaultStorage


@dataclass(slots=True)
class CallAuth:
    """The call a request belongs to (a context variable: the SDK sends each request in its sender's context)."""

    ask: Ask | None
    deadline: Deadline | None = None
    read_only: bool = False
    ended: SignInEnded | None = None
    step: str = ""  # the sign-in request in flight now, in words (what could not be reached, if it fails)


CURRENT: ContextVar[CallAuth | None] = ContextVar("ledger_chat_call_auth", default=None)


class SignInAuth(OAuthClientProvider):
    def __init__(
        self,
        url: str,
        name: str,
        storage: VaultStorage,
        signins: SignIns,
        redirect_uri: str,
        elicitations: Elicitations,
        lock: asyncio.Lock,
        margin: float = 60.0,
        client_document: str | None = None,
    ) -> None:
        metadata = OAuthClientMetadata(
            client_name="Ledger Chat",
            redirect_uris=[redirect_uri],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
        )
        super().__init__(url, metadata, storage, self._redirect, self._callback, client_metadata_url=client_document)
        self.name, self.vault, self.signins, self.margin = name, storage, signins, margin
        self.elicitations = elicitations  # the calls in flight on this connection: a call's deadline pauses
        self._paused: Deadline | None = None
        self.open = False  # the server answered a request without a token (it needs no sign-in)
        self.lock = lock  # this person's and server's: one refresh or sign-in at a time (``RemoteServers.locks``)
        self._asked: tuple[str, asyncio.Task[Any], asyncio.Future[AuthorizationCodeResult]] | None = None
        self.refreshes = 0

    async def _initialize(self) -> None:
        await super()._initialize()
        expires_at = await self.vault.expires_at()
        self.context.token_expiry_time = expires_at

    def _access(self) -> str | None:
        tokens = self.context.current_tokens
        return tokens.access_token if tokens is not None and tokens.access_token else None

    def _due(self) -> bool:
        expiry, tokens = self.context.token_expiry_time, self.context.current_tokens
        lifetime = tokens.expires_in if tokens is not None and tokens.expires_in else None
        margin = min(self.margin, lifetime / 10) if lifetime else self.margin
        return expiry is not None and time.time() > expiry - margin

    async def _auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        call = CURRENT.get() or CallAuth(ask=None)
        async with self.lock:
            if not self._initialized:
                await self._initialize()
            self.context.protocol_version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER)
            if self._access() is not None and self._due() and self.context.can_refresh_token():
                refreshing = await self._refresh_token()
                call.step = f"refresh|{refreshing.url.host}:{refreshing.url.port or ''}"
                refreshed = yield refreshing
                call.step = ""
                await self._refreshed(refreshed)
            sent = self._access()
        if sent is None and self.open:  # it answered without a token before: no sign-in, no lock
            response = yield request
            if response.status_code != 401:
                return
            self.open = False
            request.headers.pop("Authorization", None)
        if sent is None:
            async with self.lock:
                if self._access() is None:
                    inner = self._sign_in(request, call)
                    with contextlib.suppress(StopAsyncIteration):
                        outgoing = await inner.__anext__()
                        while True:  # (``async for`` would not hand the responses on)
                            outgoing = await inner.asend((yield outgoing))
                    return
                sent = self._access()
        request.headers["Authorization"] = f"Bearer {sent}"
        response = yield request
        if response.status_code != 401:
            return
        renewed = False
        async with self.lock:
            if self._access() == sent and self.context.can_refresh_token():
                refreshing = await self._refresh_token()
                call.step = f"refresh|{refreshing.url.host}:{refreshing.url.port or ''}"
                answer = yield refreshing
                call.step, renewed = "", True
                await self._refreshed(answer)
            now = self._access()
        if _calls_tool(request) and not call.read_only:
            call.ended = SignInEnded(
                "error",
                f"{self.name} refused the credentials this call was sent with; it was not sent again, as the tool "
                "is not marked read-only and may have acted already",
            )
            if renewed:  # the last answer was the token's: end with the request's own 401 instead
                request.headers.pop("Authorization", None)
                yield request
            return
        if now is None:
            async with self.lock:
                inner = self._sign_in(request, call)
                with contextlib.suppress(StopAsyncIteration):
                    outgoing = await inner.__anext__()
                    while True:
                        outgoing = await inner.asend((yield outgoing))
            return
        request.headers["Authorization"] = f"Bearer {now}"
        yield request

    async def _refreshed(self, response: httpx2.Response) -> None:
        self.refreshes += 1
        if not await self._handle_refresh_response(response):
            self.context.clear_tokens()  # refused: the next step is a sign-in

    async def _sign_in(self, request: httpx2.Request, call: CallAuth) -> AsyncGenerator[httpx2.Request, Any]:
        """The SDK's flow from no token to a token, then the request; or the request's own 401 and ``call.ended``."""
        request.headers.pop("Authorization", None)
        self.context.clear_tokens()
        if call.ask is None or call.ended is not None:  # nobody to ask, or this call's sign-in ended already
            response = yield request
            self.open = response.status_code != 401
            if not self.open:
                call.ended = call.ended or SignInNeeded(self.name)
            return
        flow = super()._auth_flow(request)
        outgoing: httpx2.Request | None = None
        try:
            outgoing = await flow.__anext__()
            while True:
                call.step = _step(outgoing, request)
                response = yield outgoing
                call.step = ""
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            self.open = self._access() is None  # the server took the request without a token: it needs none
            return
        except Exception as exc:  # noqa: BLE001 - every way a sign-in ends becomes words on the call
            call.step = ""
            call.ended = ended_by_error(self.name, exc)
        finally:
            await flow.aclose()
            self._drop_asked()
        if outgoing is not request:
            request.headers.pop("Authorization", None)
            yield request  # without a token: the server's 401 ends it, nothing ran

    async def _redirect(self, authorization_url: str) -> None:
        call = CURRENT.get()
        if self.vault.vault.refusal is not None:
            raise SignInEnded("error", f"the sign-in to {self.name} could not start: {self.vault.vault.refusal}")
        assert call is not None and call.ask is not None
        state = parse_qs(urlsplit(authorization_url).query).get("state", [""])[0]
        arrived = self.signins.expect(state, self.vault.person, self.name)
        done: asyncio.Future[Action] = asyncio.get_running_loop().create_future()
        arrived.add_done_callback(lambda f: _settle(done, "decline" if f.exception() else "accept"))
        question = Question("sign_in", f"Sign in to {self.name}", url=authorization_url, done=done)
        self._paused = call.deadline or self.elicitations.deadline_of(call.ask)
        if self._paused is not None:
            self._paused.pause()
        asked: asyncio.Task[QuestionAnswer] = asyncio.ensure_future(call.ask(question))
        self._asked = (state, asked, arrived)

    async def _callback(self) -> AuthorizationCodeResult:
        assert self._asked is not None
        state, asked, arrived = self._asked
        answer = await asked
        if arrived.done() and arrived.exception() is not None:
            return await arrived  # the server refused it: its words
        if answer.action != "accept":
            raise ended_by_answer(self.name, answer.by, answer.action)
        return await arrived

    def _drop_asked(self) -> None:
        if self._asked is None:
            return
        state, asked, _ = self._asked
        self._asked = None
        self.signins.drop(state)
        if not asked.done():
            asked.cancel()
        if self._paused is not None:
            self._paused.resume()
            self._paused = None


def _settle(done: asyncio.Future[Action], action: Action) -> None:
    if not done.done():
        done.set_result(action)


def _calls_tool(request: httpx2.Request) -> bool:
    try:
        body = json.loads(request.content or b"{}")
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("method") == "tools/call"


def _step(outgoing: httpx2.Request, request: httpx2.Request) -> str:
    if outgoing is request:
        return ""
    path = outgoing.url.path
    what = "token" if path.endswith("/token") else "register" if "regist" in path else "metadata"
    return f"{what}|{outgoing.url.host}:{outgoing.url.port or ''}"


def client_metadata(document: str | None, redirect_uri: str) -> dict[str, Any] | None:
    """This app's OAuth client ID metadata document at the https URL ``document`` (None without one)."""
    if document is None:
        return None
    return {
        "client_id": document,
        "client_name": "Ledger Chat",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }
