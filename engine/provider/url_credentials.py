"""Credentials written into ``--api-base`` (``https://user:password@host/v1``) sent the way HTTP means them.

No HTTP client may both send a URL's ``user:password@`` and an ``Authorization`` header (aiohttp, under litellm,
refuses every such request). So the URL that is called never holds them: ``split_credentials(url)`` returns the URL
without its user info and the ``Authorization: Basic`` value (RFC 7617) those credentials stand for, or None when the
URL holds none. ``engine.provider.calls.request_kwargs`` sends that header with every request to the endpoint; on an
OpenAI-compatible route (``engine.provider.light_route``) it takes the place of the provider key in that same header
(``app.providers.check_model`` refuses, at start, a key set too: one header cannot carry both). The recorded
``api_base`` stays redacted (``engine.redaction.redact_url``); ``Basic`` values are redacted in logs.
"""

from __future__ import annotations

import base64
from urllib.parse import unquote, urlsplit, urlunsplit

BASIC = "Basic "


def split_credentials(url: str) -> tuple[str, str | None]:
    """``(url without user:password@, "Basic <base64>" or None)``; a URL without user info comes back as it was."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    token = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode("ascii")
    return urlunsplit(parts._replace(netloc=hostport)), BASIC + token


def has_credentials(url: str | None) -> bool:
    return bool(url) and split_credentials(url or "")[1] is not None


def is_basic(headers: dict[str, str] | None) -> bool:
    """Whether ``headers`` carry the Basic credentials of a URL (then no provider key goes in Authorization)."""
    return any(k.lower() == "authorization" and str(v).startswith(BASIC) for k, v in (headers or {}).items())
