"""The front door's plain answers: the security headers every response carries (``SECURITY_HEADERS``, CSP
included), a refusal in one line for HTTP and websocket handshakes alike (``refuse``), a small response with those
headers (``respond``), and the same-site hop that brings a SameSite=Strict cookie back after a cross-site return
(``hop``).

Guarantees: ``add_security_headers`` sets every header of ``SECURITY_HEADERS`` on a response start, except a
sandboxed CSP a served file set for itself and a ``no-referrer`` a page asked for (a share link's); ``respond``
always adds them; ``refuse`` answers 401 with a ``WWW-Authenticate`` header, and a websocket handshake with the
handshake's own response where the server takes one (a close with 1008 otherwise).
"""

from __future__ import annotations

import html
from urllib.parse import quote

from starlette.datastructures import MutableHeaders
from starlette.types import Message, Scope, Send

CSP = "; ".join(
    (
        "default-src 'self'",
        # NiceGUI builds its page with inline scripts and compiles Vue templates in the browser (new Function)
        "script-src 'self' 'unsafe-inline' 'unsafe-eval'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",  # remote images in model output never load (they are shown as links)
        "font-src 'self' data:",
        "connect-src 'self'",
        "media-src 'self'",  # audio a tool returned, served by the app itself (/files/{sha})
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)
SECURITY_HEADERS = (
    ("content-security-policy", CSP),
    ("x-frame-options", "DENY"),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "same-origin"),  # never to another site; a form posted here keeps its Origin
    ("cross-origin-opener-policy", "same-origin"),
    ("cross-origin-resource-policy", "same-origin"),
)


def add_security_headers(message: Message) -> None:
    """Set ``SECURITY_HEADERS``; a response that set a sandboxed CSP of its own (a served file) keeps it, and one
    that asked for no referrer at all (a share link's page) keeps that."""
    headers = MutableHeaders(scope=message)
    own = headers.get("content-security-policy", "")
    for name, value in SECURITY_HEADERS:
        if name == "content-security-policy" and own.endswith("; sandbox") and "default-src 'none'" in own:
            continue
        if name == "referrer-policy" and headers.get(name) == "no-referrer":
            continue
        headers[name] = value


async def refuse(scope: Scope, send: Send, status: int, text: str) -> None:
    """Answer ``status`` with a line of text: an HTTP response, or the handshake's response for a websocket."""
    extra = [("www-authenticate", 'Bearer realm="Ledger Chat"')] if status == 401 else []
    if scope["type"] == "http":
        await respond(send, status, text, "text/plain; charset=utf-8", extra)
    elif "websocket.http.response" in scope.get("extensions", {}):
        await respond(send, status, text, "text/plain; charset=utf-8", extra, prefix="websocket.http.response")
    else:
        await send({"type": "websocket.close", "code": 1008})  # before accept: the server answers 403


async def respond(
    send: Send,
    status: int,
    body: str,
    media_type: str,
    extra: list[tuple[str, str]] | None = None,
    prefix: str = "http.response",
) -> None:
    payload = body.encode("utf-8")
    headers = [("content-type", media_type), ("content-length", str(len(payload))), *(extra or [])]
    start: Message = {
        "type": f"{prefix}.start",
        "status": status,
        "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers],
    }
    add_security_headers(start)
    await send(start)
    await send({"type": f"{prefix}.body", "body": payload})


async def hop(scope: Scope, send: Send) -> None:
    """The same address again (with ``hop=1``), from a page of this site: the browser sends its cookies then."""
    query = scope.get("query_string", b"").decode("latin-1")
    url = html.escape(f"{quote(scope['path'])}?{query}&hop=1", quote=True)
    body = f'<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0; url={url}"><title>…</title>'
    await respond(send, 200, body, "text/html; charset=utf-8", [("cache-control", "no-store")])
