"""The app's pages: ``/`` (a new chat) and ``/chat/{id}``, each a ``ChatPage`` over the engine it is given, the
agent presets (``/presets``, ``ui.presets_page``), usage and spend limits (``/usage``, ``/usage.csv``:
``ui.usage_page``), an admin's recorded reads (``/admin/read``, ``ui.admin_read``), share links (``/s/<token>``,
``ui.share_page``; "Share" in the chat's header, ``ui.share_dialog``; ``/shares``, ``ui.shared_links``), and
``/export/{id}``, a conversation's ledger as JSON Lines (for scripts: ``Authorization: Bearer <token>``), and the
file routes (``ui.files_routes``: ``/files/{sha}``, its thumbnail, ``POST /files``).

Guarantees: pages are registered inside ``register_pages`` (NiceGUI's test runner re-imports page modules), read
the engine from the ``PageContext`` they were given, and never import litellm or a store. An unknown or deleted
conversation id shows the empty page with a notice and the URL is set back to ``/`` (404 for an export). A chat
still being read after ``OPENING_SECONDS`` (an older file whose long texts are being moved into blobs,
``store.tinydb.bounding``) is answered at once with a line that says so (``OPENING``), and the page reloads itself
once the chat is read: never NiceGUI's error page for a page slower than its 3 s response timeout. Every
route sits behind ``ui.guard`` like the pages. A page that was served but never connected (a prefetch, a client
that gave up) is released after ``UNCONNECTED_SECONDS`` (NiceGUI alone keeps it for a minute).
"""

from __future__ import annotations

import asyncio

from nicegui import Client, app, ui
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from engine.files import referenced_by
from ledger.codec import to_jsonl
from ui.admin_read import chat_page, chats_page, reader
from ui.admin_users import AdminUsersPage, not_found
from ui.attachments import files_of, uploaded_by
from ui.chat_page import ChatPage
from ui.context import PageContext, install, viewer_of
from ui.download_names import ledger_name
from ui.files_routes import register_file_routes
from ui.notices import notice
from ui.presets_page import PresetsPage
from ui.sessions import track
from ui.share_dialog import add_share_button
from ui.share_page import register_share_routes
from ui.shared_links import SharedLinksPage
from ui.sign_in_card import register_callback, remote_of
from ui.style import serve_static
from ui.usage_page import UsagePage, register_usage

UNCONNECTED_SECONDS = 15.0
OPENING_SECONDS = 2.0
OPENING = (
    "Opening this chat: a long text in it is being moved into a file of its own. The chat shows here when that is done."
)


def register_pages(context: PageContext) -> None:
    install(context)
    serve_static()
    app.timer(5.0, lambda: Client.prune_instances(client_age_threshold=UNCONNECTED_SECONDS))
    register_file_routes(
        lambda: files_of(context.engine) if context.engine is not None else None,
        lambda sha: ledger_name(context.engine.state.conversations.values(), sha) if context.engine else None,
        (lambda sha, request: may_read(context, sha, request)) if context.team else None,
    )

    register_callback(lambda: remote_of(context.engine))  # /oauth/callback: back from a tool server's sign-in

    @ui.page("/")
    def index(preset: str | None = None) -> None:  # ``?preset=ID``: a new chat with that agent preset
        track(context)  # team mode: the page is held to its session (ui.sessions)
        shown(context, ChatPage(context, None, preset))

    @ui.page("/admin/users")
    async def admin_users() -> None:  # team mode, admins only; anyone else: as an unknown address
        track(context)
        person = context.person() if context.team else None
        await AdminUsersPage(context.people, person, oidc=context.oidc, can_read=context.admin_can_read).build()

    @ui.page("/admin/read")
    async def admin_read(person: str | None = None) -> None:  # --admin-can-read, admins only: each read recorded
        track(context)
        found = reader(context.people, context.person() if context.team else None, context.admin_can_read)
        if found is None:
            return not_found()
        await chats_page(context.require_engine(), found[0], person)

    @ui.page("/admin/read/{cid}")
    async def admin_read_chat(cid: str) -> None:
        track(context)
        found = reader(context.people, context.person() if context.team else None, context.admin_can_read)
        if found is None:
            return not_found()
        await chat_page(context.require_engine(), *found, cid)

    @ui.page("/usage")
    async def usage() -> None:  # a person's usage and limit; an admin's: everyone's (ui.usage_page)
        track(context)
        await UsagePage(context).build()

    register_usage(context)

    @ui.page("/presets")
    def presets(preset: str | None = None) -> None:
        track(context)
        PresetsPage(context.require_engine(), preset, context.viewer()).build()

    @ui.page("/chat/{cid}")
    async def chat(cid: str) -> None:
        track(context)
        engine = context.require_engine()
        loading = asyncio.ensure_future(engine.load(cid, context.viewer()))  # off the loop; another's: None
        if not (await asyncio.wait({loading}, timeout=OPENING_SECONDS))[0]:
            ui.label(OPENING).classes("lc-meta").mark("opening")
            client = ui.context.client
            await client.connected(timeout=60)  # the page is answered now; the chat follows
            await loading
            if not client.is_deleted:  # a browser that never connected: its page was dropped (app.memory)
                ui.navigate.reload()
            return
        if loading.result() is None:
            notice("That conversation does not exist (it may have been deleted).", "warning")
            ChatPage(context, None).build()
            ui.navigate.history.replace("/")
            return
        shown(context, ChatPage(context, cid))

    @ui.page("/shares")
    async def shares(all: str | None = None) -> None:  # noqa: A002 - ``?all=1``: an admin's list of every link
        track(context)
        links = context.sharing()
        if links is None:
            return not_found()
        await SharedLinksPage(links, context.viewer(), everyone=all == "1").build()

    register_share_routes(context)

    @app.get("/export/{cid}")
    async def export(cid: str, request: Request) -> Response:
        viewer = viewer_of(context, request.scope)  # someone else's conversation: as a missing one
        events = await context.require_engine().exported(cid, viewer)  # on the loop, read off it
        if events is None:
            return PlainTextResponse("No such conversation.", status_code=404)
        return Response(
            "".join(to_jsonl(events)).encode("utf-8"),
            media_type="application/x-ndjson",
            headers={"content-disposition": f'attachment; filename="ledger-{cid}.jsonl"'},
        )


def shown(context: PageContext, page: ChatPage) -> None:
    """Build the chat page, with "Share" in its header (``ui.share_dialog``)."""
    page.build()
    add_share_button(context, page.heading, lambda: page.cid)


async def may_read(context: PageContext, sha256: str, request: Request) -> bool:
    """Team mode: whether the request's person sent this file or owns a conversation that names it (the
    conversations not in memory are read on a worker thread, newest first, until one does)."""
    viewer = viewer_of(context, request.scope)
    if uploaded_by(sha256, viewer.person):
        return True
    engine, state = context.require_engine(), context.require_engine().state
    return await asyncio.to_thread(
        lambda: any(sha256 in referenced_by(conv) for conv in engine.read_conversations(state, viewer))
    )
