"""The share link's routes: ``GET /s/<token>`` (the snapshot as plain HTML, ``ui.share_html``), ``GET
/s/<token>/files/<sha>`` (a file of it, when the sharer ticked "include attachments") and ``/s/<token>/copy``
("Continue in a copy", a page behind the front door like every other).

Guarantees:
- Every link that does not hold (unknown, revoked, expired, its chat deleted, its owner's account disabled or
  removed: ``engine.commands.ShareLinks.find``) is answered 404 with the one ``NOT_FOUND`` page, whatever the
  reason: a link never tells which.
- A members-only link opened by a stranger: team mode sends them to sign in and back (303); personal mode answers
  401 as the front door does without the token.
- The page is plain HTML with no script and no websocket: nothing it does reaches the engine but the open being
  counted (``ShareLinks.opened``). Its response carries ``X-Robots-Tag: noindex, nofollow``, ``Referrer-Policy:
  no-referrer`` and ``Cache-Control: no-store`` besides the guard's headers (CSP and the rest, ``ui.guard``).
- "Continue in a copy" is offered to a member (a signed-in person in team mode); the copy page makes the copy only
  on a click (a websocket event of a page of this app: no other site can make one) and opens it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from nicegui import app, ui
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response

from engine.commands import InputRejected, Shared
from ledger.errors import StoreError
from ledger.share_view import view_of
from ui.context import PageContext, person_in
from ui.files_routes import FILE_CSP, SHA, disposition, inline_type
from ui.guard import NEEDS_TOKEN
from ui.notices import notice
from ui.sessions import track
from ui.share_html import share_html
from ui.signin import sign_in_address
from ui.style import add_style

NOT_FOUND = (
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex, nofollow">'
    "<title>Not found · Ledger Chat</title></head><body><h1>Not found</h1><p>There is nothing at this address: the "
    "link may be mistyped, revoked or expired.</p></body></html>\n"
)
HEADERS = {"x-robots-tag": "noindex, nofollow", "referrer-policy": "no-referrer", "cache-control": "no-store"}


def not_found() -> Response:
    return HTMLResponse(NOT_FOUND, status_code=404, headers=HEADERS)


def is_member(context: PageContext, scope: Any) -> bool:
    """Whether the request passed the front door (``ui.guard`` says so for a share path)."""
    if context.team:
        return person_in(scope) is not None
    state = scope.get("state")
    return bool(state.get("member")) if isinstance(state, dict) else False


def register_share_routes(context: PageContext) -> None:
    async def found(token: str) -> Shared | Response:
        links = context.sharing()
        if links is None:
            return not_found()
        try:
            shared = await links.find(token)
        except StoreError as exc:
            return PlainTextResponse(f"This link cannot be read just now ({exc}); try again.", status_code=503)
        return shared if shared is not None else not_found()

    @app.get("/s/{token}")
    async def share(token: str, request: Request) -> Response:
        shared = await found(token)
        if isinstance(shared, Response):
            return shared
        member = is_member(context, request.scope)
        if shared.share.audience == "members" and not member:
            if context.team:
                target = sign_in_address(request.url.path, request.url.query.encode("latin-1"))
                return RedirectResponse(target, status_code=303, headers=HEADERS)
            return PlainTextResponse(NEEDS_TOKEN, status_code=401, headers=HEADERS)
        view = view_of(shared.events, shared.share.at_seq, tools=shared.share.tools,
                       attachments=shared.share.attachments)  # fmt: skip
        if view is None:
            return not_found()
        links = context.sharing()
        if links is not None:
            links.opened(shared)
        person = person_in(request.scope)
        owner = person is not None and person.id == shared.link.owner if context.team else member
        html = share_html(view, token, member=member, owner=owner)
        return HTMLResponse(html, headers=HEADERS)

    @app.get("/s/{token}/files/{sha256}")
    async def share_file(token: str, sha256: str, request: Request) -> Response:
        shared = await found(token)
        if isinstance(shared, Response):
            return shared
        if shared.share.audience == "members" and not is_member(context, request.scope):
            return not_found()
        view = view_of(shared.events, shared.share.at_seq, tools=False, attachments=shared.share.attachments)
        names = {f.sha256: f.name for m in (view.messages if view else ()) for f in m.files}
        engine = context.engine
        if not SHA.fullmatch(sha256) or sha256 not in names or engine is None:
            return not_found()
        data = await asyncio.to_thread(engine.files.read, sha256)
        if data is None:
            return not_found()
        inline = inline_type(data)
        headers = {**HEADERS, "x-content-type-options": "nosniff", "content-security-policy": FILE_CSP}
        if inline is None:
            headers["content-disposition"] = disposition(names[sha256], sha256)
        return Response(data, media_type=inline or "application/octet-stream", headers=headers)

    @ui.page("/s/{token}/copy")
    async def copy(token: str) -> None:
        track(context)  # team mode: the page is held to its session; its events act for its person (ui.sessions)
        add_style()
        ui.page_title("Continue in a copy · Ledger Chat")
        links = context.sharing()
        shared = await links.find(token) if links is not None else None
        with ui.column().classes("w-full max-w-xl mx-auto gap-3 px-3 py-4"):
            if links is None or shared is None:
                ui.label("There is nothing at this address: the link may be mistyped, revoked or expired.").mark(
                    "not-found"
                )
                return
            view = view_of(shared.events, shared.share.at_seq, tools=False, attachments=False)
            title = (view.title if view else "") or "a shared chat"
            ui.label(f"Continue “{title}” in a copy").classes("text-lg font-medium")
            ui.label(
                "A new chat of your own with the messages of this snapshot (the attempts it showed), where you can "
                "go on asking. The shared chat does not change."
            ).classes("lc-meta")

            async def make() -> None:
                try:
                    new_cid = await links.copy(shared, context.viewer())
                except (InputRejected, StoreError) as exc:
                    notice(str(exc), "negative")
                    return
                ui.navigate.to(f"/chat/{new_cid}")

            ui.button("Make my copy", icon="content_copy", on_click=make).props("no-caps").mark("make-copy")
