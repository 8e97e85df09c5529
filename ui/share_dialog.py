""" "Share" on the chat page: a button in the header that opens the dialog making a read-only link to the chat as it
is now (``engine.commands.ShareLinks.create``).

Guarantees:
- The dialog offers "Include tool details (arguments and results)" and "Include attachments" (both off), who may open
  it ("Signed-in members", the default in team mode, or "Anyone with the link"; in personal mode "members" are
  whoever can open this Ledger Chat and the default is anyone) and an expiry (never, a day, a week, 30 days).
- The link (``<this address>/s/<token>``) is shown once, in the dialog, with Copy: only its hash is kept, so it can
  never be shown again; the dialog says so. A refusal (nothing sent yet, saving fails) is a sentence.
- Nothing here is on the chat page's own code path: ``add_share_button`` adds itself to a built page's header.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from nicegui import ui

from engine.commands import InputRejected, ShareOptions
from ledger.errors import StoreError
from ui.context import PageContext
from ui.notices import notice

EXPIRY = {"never": "Never", "1": "After a day", "7": "After a week", "30": "After 30 days"}
SHOWN_ONCE = (
    "Copy it now: it is shown only this once (Ledger Chat keeps only a hash of it). Lost? Revoke and share again."
)


def add_share_button(context: PageContext, heading: ui.element, cid: Callable[[], str | None]) -> None:
    """A "Share" button at the end of the header that holds ``heading``; ``cid()`` is the chat shown now."""
    header = heading.parent_slot.parent if heading.parent_slot is not None else None
    if header is None or context.sharing() is None:
        return
    with header:
        ui.button(icon="share", on_click=lambda: ShareDialog(context, cid()).open()).props(
            'flat round dense color=white aria-label="Share" title="Share a read-only snapshot of this chat"'
        ).mark("share-button")


class ShareDialog:
    def __init__(self, context: PageContext, cid: str | None) -> None:
        self.context, self.cid = context, cid
        team = context.team
        members = "Signed-in members" if team else "Whoever can open this Ledger Chat"
        with ui.dialog() as self.dialog, ui.card().classes("w-full max-w-xl").mark("share-dialog"):
            ui.label("Share a snapshot of this chat").classes("text-lg font-medium")
            ui.label("The link shows the chat as it is now, read-only; later messages never appear in it.").classes(
                "lc-meta"
            )
            self.tools = ui.checkbox("Include tool details (arguments and results)").mark("share-tools")
            self.files = ui.checkbox("Include attachments").mark("share-files")
            ui.label("Who can open it").classes("text-sm")
            options = {"members": members, "anyone": "Anyone with the link"}
            self.audience = ui.radio(options, value="members" if team else "anyone").mark("share-audience")
            self.expiry = ui.select(EXPIRY, value="never", label="Expires").mark("share-expiry")
            self.result = ui.column().classes("w-full gap-1")
            with ui.row().classes("gap-2"):
                self.create = ui.button("Create link", on_click=self._create).props("no-caps").mark("share-create")
                ui.button("Shared links", on_click=lambda: ui.navigate.to("/shares")).props("flat no-caps")
                ui.button("Close", on_click=self.dialog.close).props("flat no-caps")

    def open(self) -> None:
        if self.cid is None:
            notice("Send a message first: there is nothing to share yet.", "warning")
            return
        self.dialog.open()

    async def _create(self) -> None:
        links = self.context.sharing()
        if links is None or self.cid is None:
            return
        days = self.expiry.value
        expires = None if days == "never" else _iso(datetime.now(UTC) + timedelta(days=int(days)))
        options = ShareOptions(bool(self.tools.value), bool(self.files.value), self.audience.value, expires)
        try:
            token, _ = await links.create(self.cid, self.context.viewer(), options)
        except (InputRejected, StoreError) as exc:
            notice(str(exc), "negative")
            return
        base = str(ui.context.client.request.base_url).rstrip("/")
        url = f"{base}/s/{token}"
        self.create.disable()
        with self.result:
            ui.input("Link", value=url).props("readonly").classes("w-full").mark("share-link")
            ui.label(SHOWN_ONCE).classes("lc-meta")
            ui.button("Copy", icon="content_copy", on_click=lambda: ui.clipboard.write(url)).props("flat no-caps")


def _iso(moment: datetime) -> str:
    """The ledger's timestamp format (``engine.stamps.now_iso``): milliseconds, ``+00:00``."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")
