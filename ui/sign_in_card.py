"""A sign-in a tool call (or the Tools panel) waits for: "Sign in to <server>", a link to the server's sign-in page
opened in a new tab, and Cancel; and the page the browser comes back to (``/oauth/callback``).

Guarantees:
- ``sign_in_link`` shows the server's name, the host of its sign-in page, and the link as "Sign in to <server>"
  (``data-lc-marker=sign-in-link``, ``target=_blank``, ``rel=noopener noreferrer``; only http/https are links);
  the page never opens it by itself. **Cancel** gives up (the call ends ``declined``).
- ``callback_page`` is what ``GET /oauth/callback`` answers: the sign-in's ``state`` is handed to the waiting
  sign-in once (``engine.tools.SignIns.arrive_anywhere``: only the person who started it; on several instances
  on one database, to the instance waiting for it, within a few seconds), and the page says in words what
  happened (signed in: go back to the chat, which goes on by itself; refused, with the server's ``error`` code;
  not waiting any more). The query (code, state) is never shown, logged or kept.
- ``GET /oauth/client.json`` is this app's OAuth client ID metadata document (with an https ``--public-url``;
  else 404), which authorization servers fetch without a session (``ui.guard`` lets it through).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from urllib.parse import urlsplit

from nicegui import app, ui
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from engine.commands import Engine
from engine.tools import AppHub, RemoteServers, SignIns, client_metadata

CALLBACK, CLIENT_DOCUMENT = "/oauth/callback", "/oauth/client.json"


def sign_in_link(url: str, message: str, cancel: Callable[[], None] | None) -> None:
    parts = urlsplit(url)
    with ui.column().classes("gap-1 w-full").mark("sign-in"):
        ui.label(
            f"The tool's server asks you to sign in. Its sign-in page ({parts.hostname or 'unknown site'}) opens in "
            "a new tab; the call goes on once you are back."
        ).classes("lc-meta").mark("sign-in-host")
        with ui.row().classes("gap-2 items-center"):
            if parts.scheme in ("http", "https"):
                link = ui.link(message, url, new_tab=True).classes("font-medium").mark("sign-in-link")
                link.props["rel"] = "noopener noreferrer"
            else:
                ui.label(message).mark("sign-in-link")
            if cancel is not None:
                button = ui.button("Cancel", icon="close", on_click=cancel).props("no-caps dense flat")
                button.props["aria-label"] = "Cancel the sign-in"
                button.mark("question-cancel")


def remote_of(engine: Engine | None) -> RemoteServers | None:
    """The running app's remote tool servers (None: not started, or ``--no-tools``)."""
    hub = engine.tools if engine is not None else None
    return hub.remote if isinstance(hub, AppHub) else None


def register_callback(remote: Callable[[], RemoteServers | None]) -> None:
    """``GET /oauth/callback``: the browser back from a server's sign-in page; ``GET /oauth/client.json``: this
    app's client ID metadata document (``remote()``: the app's remote servers)."""

    @app.get(CALLBACK)
    async def oauth_callback(request: Request) -> Response:
        person = request.scope.get("state", {}).get("person")  # team mode: the guard's (ui.guard)
        query = {k: v for k, v in request.query_params.items() if k in ("code", "state", "error", "iss")}
        servers = remote()
        status, page = await callback_page(servers.signins if servers else None, query, getattr(person, "id", None))
        return HTMLResponse(page, status_code=status, headers={"cache-control": "no-store"})

    @app.get(CLIENT_DOCUMENT)
    async def client_document() -> Response:
        servers = remote()
        document = client_metadata(servers.client_document, servers.redirect_uri()) if servers is not None else None
        if document is None:
            return JSONResponse({"error": "This app has no https public address (--public-url)."}, status_code=404)
        return JSONResponse(document, headers={"cache-control": "max-age=300"})


async def callback_page(signins: SignIns | None, query: dict[str, str], person: str | None) -> tuple[int, str]:
    """(HTTP status, the HTML page) of the sign-in coming back (see the module's guarantees)."""
    if signins is None:
        return 404, _page("No sign-in is waiting here.")
    taken, words = await signins.arrive_anywhere(query, person)
    return (200 if taken else 409), _page(words)


def _page(words: str) -> str:
    text = html.escape(words)
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>Ledger Chat: sign-in</title></head>"
        f"<body style='font-family:system-ui;margin:3rem'><p role=status>{text}</p>"
        "<p><a href='/'>Back to Ledger Chat</a></p></body></html>"
    )
