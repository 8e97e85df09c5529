"""Sign-in with an OpenID Connect provider (``--accounts oidc``): the authorization code flow with PKCE, through
Authlib; nothing about tokens is hand-written here.

Guarantees:
- ``GET /signin/oidc`` sends the browser to the provider's authorization endpoint (from its discovery document)
  with a fresh ``state``, ``nonce`` and PKCE S256 challenge; those three and where to go after are kept in a
  short-lived cookie of the browser's own (``PENDING``: HttpOnly, SameSite=Lax, 10 minutes, path
  ``/signin/oidc``), so the callback may land on any instance.
- ``GET /signin/oidc/callback`` takes the answer only when its ``state`` is the cookie's; exchanges the code (with
  the verifier) at the token endpoint; and accepts the ID token only when Authlib finds it signed by a key of the
  provider's JWKS, issued by the configured issuer (the discovery document must name the same one), for this
  client id, not expired, and carrying the nonce of this sign-in. Anything else is refused with a sentence saying
  which check failed (``refusal``), on the sign-in page, and no session is made.
- The person is the issuer and subject (account ``oidc:<sha256 of both, 24 hex>``), named by the ``name``,
  ``preferred_username`` or ``email`` claim; an admin when ``--oidc-admin-group`` is in the ``groups`` claim. With
  ``--oidc-member-group`` only people whose ``groups`` claim holds it (or the admin group) get in; anyone else is
  refused with a sentence and no account is made.
- A provider that does not answer (discovery, keys, token) is a sentence too ("does not answer"), never a 500.
- Tokens from the provider are used once and never stored, logged or shown.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import logging
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from starlette.datastructures import Headers
from starlette.requests import cookie_parser
from starlette.types import Scope

from engine.people import People, PeopleError, SignedIn
from ledger.errors import StoreError

log = logging.getLogger("ledger_chat.access")
START, CALLBACK = "/signin/oidc", "/signin/oidc/callback"
PENDING = "lc_oidc"
PENDING_SECONDS = 600


@dataclass(frozen=True, slots=True)
class OidcSettings:
    issuer: str
    client_id: str
    client_secret: str | None = None
    admin_group: str | None = None
    member_group: str | None = None  # when set, only people in it (or in the admin group) may sign in

    @property
    def provider_name(self) -> str:
        return urlsplit(self.issuer).netloc or self.issuer


class OidcRefused(Exception):
    """The sign-in cannot go on; the message is a sentence for the person."""


class OidcDoor:
    def __init__(self, settings: OidcSettings, people: People) -> None:
        from authlib.integrations.starlette_client import OAuth  # type: ignore[import-untyped]  # team mode only

        self.settings, self.people = settings, people
        registry = OAuth()
        registry.register(
            "idp",
            client_id=settings.client_id,
            client_secret=settings.client_secret,
            server_metadata_url=settings.issuer.rstrip("/") + "/.well-known/openid-configuration",
            client_kwargs={
                "scope": "openid profile email",
                "code_challenge_method": "S256",
                "token_endpoint_auth_method": "client_secret_post" if settings.client_secret else "none",
            },
        )
        self.client: Any = registry.create_client("idp")

    async def start(self, scope: Scope, wanted: str) -> tuple[str, str]:
        """(the provider's authorization address, the pending cookie's value)."""
        await self._metadata()
        made = await self._call(self.client.create_authorization_url(redirect_uri(scope)))
        pending = {"state": made["state"], "nonce": made["nonce"], "verifier": made["code_verifier"], "next": wanted}
        return made["url"], base64.urlsafe_b64encode(json.dumps(pending).encode()).decode()

    async def finish(self, scope: Scope) -> tuple[SignedIn, str]:
        """(the session of the person the provider vouched for, where to go now)."""
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        pending = read_pending(Headers(scope=scope))
        if pending is None or not query.get("state") or query["state"] != pending.get("state"):
            raise OidcRefused("This sign-in was not started here, or it took too long; please sign in again.")
        if "error" in query:  # after the state: a made-up link cannot put its words on this page
            code = "".join(c for c in query["error"][:40] if c.isalnum() or c == "_")
            raise OidcRefused(f"The sign-in provider refused this sign-in ({code}).")
        if not pending.get("verifier") or not pending.get("nonce"):
            raise OidcRefused("This sign-in was not started here, or it took too long; please sign in again.")
        await self._metadata()
        token = await self._call(
            self.client.fetch_access_token(
                redirect_uri=redirect_uri(scope), code=query.get("code", ""), code_verifier=pending["verifier"]
            )
        )
        try:
            claims = await self.client.parse_id_token(token, nonce=pending["nonce"], leeway=60)
        except Exception as exc:  # noqa: BLE001 - Authlib's and joserfc's many errors: each named in words
            if type(exc).__module__.split(".")[0] in ("httpx", "httpx2", "httpcore"):  # its keys: not reached
                raise self._not_answering(exc) from None
            log.warning("refused an ID token from %s: %s", self.settings.provider_name, type(exc).__name__)
            raise OidcRefused(refusal(exc)) from None
        if claims is None:
            raise OidcRefused("The sign-in provider sent no ID token.")
        name = "oidc:" + hashlib.sha256(f"{claims['iss']}\n{claims['sub']}".encode()).hexdigest()[:24]
        shown = str(claims.get("name") or claims.get("preferred_username") or claims.get("email") or claims["sub"])
        groups = claims.get("groups") if isinstance(claims.get("groups"), list) else []
        admin = bool(self.settings.admin_group) and self.settings.admin_group in groups
        if self.settings.member_group and not admin and self.settings.member_group not in groups:
            log.info("refused a sign-in from %s: not in the member group", self.settings.provider_name)
            raise OidcRefused(
                f"Your account at {self.settings.provider_name} is not one this Ledger Chat lets in (it is not in "
                "the group that may use it); ask an admin."
            )
        try:
            signed = await asyncio.to_thread(self.people.signed_in_elsewhere, name, shown[:100], admin=admin)
        except PeopleError as exc:
            raise OidcRefused(str(exc)) from None
        except StoreError as exc:
            raise OidcRefused(f"Sign-in cannot be saved just now ({exc}); try again in a moment.") from None
        return signed, str(pending.get("next") or "/")

    async def _metadata(self) -> None:
        metadata = await self._call(self.client.load_server_metadata())
        said = str(metadata.get("issuer", "")).rstrip("/")
        if said != self.settings.issuer.rstrip("/"):
            raise OidcRefused(
                f"The sign-in provider calls itself {said or 'nothing'}, not {self.settings.issuer}: sign-in is off "
                "until --oidc-issuer names it exactly."
            )

    async def _call(self, work: Any) -> Any:
        from authlib.common.errors import AuthlibBaseError  # type: ignore[import-untyped]

        try:
            return await work
        except OidcRefused:
            raise
        except AuthlibBaseError as exc:  # the provider answered with an OAuth error (a bad code, a wrong secret)
            log.warning("the sign-in provider %s refused: %s", self.settings.provider_name, exc.error)
            raise OidcRefused(
                f"The sign-in provider refused this sign-in ({exc.error}); try again, or ask an admin to check "
                "--oidc-client-id and LEDGERCHAT_OIDC_CLIENT_SECRET."
            ) from None
        except Exception as exc:  # noqa: BLE001 - not reached, or not understood: Authlib's HTTP client (httpx2), JSON
            log.warning("the sign-in provider %s did not answer: %s", self.settings.provider_name, type(exc).__name__)
            self.client.server_metadata = {}  # asked again next time: the provider may be back
            raise self._not_answering(exc) from None

    def _not_answering(self, exc: Exception) -> OidcRefused:
        return OidcRefused(
            f"The sign-in provider at {self.settings.provider_name} does not answer as expected "
            f"({type(exc).__name__}); try again in a moment."
        )


def refusal(exc: Exception) -> str:
    """Which check an ID token failed, in a sentence."""
    kind, text = type(exc).__name__, str(exc)
    if "Expired" in kind or "'exp'" in text:
        why = "it has expired"
    elif "'iss'" in text:
        why = "it was issued by another provider"
    elif "'aud'" in text or "'azp'" in text:
        why = "it was issued for another application"
    elif "'nonce'" in text:
        why = "it answers another sign-in"
    elif "Signature" in kind or "signature" in text.lower() or "KeyId" in kind:
        why = "its signature does not match the provider's keys"
    else:
        why = f"it does not pass the checks ({kind})"
    return f"The sign-in provider's ID token was refused: {why}. Nobody was signed in; please try again."


def redirect_uri(scope: Scope) -> str:
    host = Headers(scope=scope).get("host", "")
    return f"{scope.get('scheme', 'http')}://{host}{scope.get('root_path', '')}{CALLBACK}"


def read_pending(headers: Headers) -> dict[str, str] | None:
    raw = cookie_parser(headers.get("cookie", "")).get(PENDING)
    if not raw:
        return None
    try:
        data = json.loads(base64.urlsafe_b64decode(raw.encode()))
    except ValueError:
        return None
    return data if isinstance(data, dict) and all(isinstance(v, str) for v in data.values()) else None
