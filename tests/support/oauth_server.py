"""A real OAuth-protected MCP server for the tests: an authorization server (the ``mcp`` SDK's server auth routes:
metadata, dynamic registration, authorize, token, revoke) and a streamable-HTTP resource server (the SDK's bearer
middleware and protected-resource metadata) in one process of its own.

    python -m tests.support.oauth_server PORT   # http://127.0.0.1:PORT/mcp, its AS at http://127.0.0.1:PORT

Guarantees: ``/authorize`` approves at once (no login page: the browser goes straight back to the client's
redirect URI with a code), for the PKCE challenge it was given; tokens are bound to the ``resource`` asked for
and the resource server refuses others; ``LEDGERCHAT_OAUTH_TTL`` sets the access tokens' lifetime (seconds,
default 3600). Test controls (plain HTTP, no auth): ``GET /test/stats`` (JSON counts: ``registered``,
``authorized``, ``exchanged``, ``refreshed``, ``refresh_refused``, ``calls``, and every token the server issued,
so a test can search for their bytes), ``POST /test/expire`` (every access token stops being accepted now),
``POST /test/revoke-refresh`` (every refresh token is refused from now on). Tools: ``echo(text)`` (read-only),
``stamp(text)`` (no hints: it may have effects; counts its calls), ``slow_echo(text, seconds)`` (read-only).
"""

from __future__ import annotations

import os
import secrets
import sys
import time
from typing import Any

import anyio
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from mcp.types import ToolAnnotations
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

TTL = int(os.environ.get("LEDGERCHAT_OAUTH_TTL", "3600"))


class Provider:
    """The authorization server's state, in memory."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.issued: list[str] = []
        self.stats = {"registered": 0, "authorized": 0, "exchanged": 0, "refreshed": 0, "refresh_refused": 0}
        self.refresh_revoked = False

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info
        self.stats["registered"] += 1

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = AuthorizationCode(
            code=secrets.token_urlsafe(24),
            scopes=params.scopes or ["mcp"],
            expires_at=time.time() + 300,
            client_id=client.client_id or "",
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        self.codes[code.code] = code
        self.stats["authorized"] += 1
        return construct_redirect_uri(str(params.redirect_uri), code=code.code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull, code: str) -> AuthorizationCode | None:
        return self.codes.get(code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(code.code, None)
        self.stats["exchanged"] += 1
        return self._issue(client.client_id or "", code.scopes, code.resource)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        token = self.refresh.get(refresh_token)
        if token is None or self.refresh_revoked:
            self.stats["refresh_refused"] += 1
            return None
        return token

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        self.stats["refreshed"] += 1
        return self._issue(client.client_id or "", scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        access = self.access.get(token)
        if access is None or (access.expires_at is not None and access.expires_at < time.time()):
            return None
        return access

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = f"at-{secrets.token_urlsafe(24)}", f"rt-{secrets.token_urlsafe(24)}"
        expires = int(time.time()) + TTL
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=expires, resource=resource
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        self.issued += [access, refresh]
        return OAuthToken(access_token=access, refresh_token=refresh, expires_in=TTL, scope=" ".join(scopes))


def build(port: int) -> tuple[MCPServer, Provider]:
    base = f"http://127.0.0.1:{port}"
    provider = Provider()
    server = MCPServer(
        "oauth-test",
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            validate_token_resource=True,
            required_scopes=["mcp"],
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=["mcp"], default_scopes=["mcp"]
            ),
            revocation_options=RevocationOptions(enabled=True),
        ),
    )
    calls = {"stamp": 0, "all": 0}

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def echo(text: str) -> str:
        """Say the text back."""
        calls["all"] += 1
        return f"echo: {text}"

    @server.tool()
    def stamp(text: str) -> str:
        """Stamp the text (counts: it may have effects)."""
        calls["all"] += 1
        calls["stamp"] += 1
        return f"stamped #{calls['stamp']}: {text}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def slow_echo(text: str, seconds: float = 1.0) -> str:
        """Say the text back after a while."""
        calls["all"] += 1
        await anyio.sleep(seconds)
        return f"slow echo: {text}"

    @server.custom_route("/test/stats", methods=["GET"])  # type: ignore[untyped-decorator]
    async def stats(request: Request) -> Response:
        return JSONResponse(
            {**provider.stats, "calls": calls["all"], "stamps": calls["stamp"], "tokens": provider.issued}
        )

    @server.custom_route("/test/expire", methods=["POST"])  # type: ignore[untyped-decorator]
    async def expire(request: Request) -> Response:
        for token in provider.access.values():
            token.expires_at = int(time.time()) - 1
        return JSONResponse({"ok": True})

    @server.custom_route("/test/revoke-refresh", methods=["POST"])  # type: ignore[untyped-decorator]
    async def revoke_refresh(request: Request) -> Response:
        provider.refresh_revoked = True
        return JSONResponse({"ok": True})

    @server.custom_route("/test/allow-refresh", methods=["POST"])  # type: ignore[untyped-decorator]
    async def allow_refresh(request: Request) -> Response:
        provider.refresh_revoked = False
        return JSONResponse({"ok": True})

    return server, provider


def main(argv: list[str]) -> Any:
    import uvicorn

    port = int(argv[1])
    server, _ = build(port)
    uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(sys.argv)
