"""The "Shared links" page (``/shares``): a person's share links, and every one for an admin (``?all=1``), each with
its chat, snapshot, options, expiry and how many times it was opened, to update or revoke.

Guarantees:
- Only links the store holds are listed (a revoked one is gone from the list at once, on every instance); a member
  sees only their own (``?all=1`` is the same list for them); an admin's ``all`` lists everyone's with the owner.
- "Update the link" moves it to the chat as it is now (``ShareLinks.update``: same link, ``share_updated``);
  "Revoke" makes it answer "not found" from the next request on (``ShareLinks.revoke``). Each is on the chat
  owner's record; a refusal is a sentence.
- The links themselves are never shown (only their hashes are kept): the list names the chat and the snapshot.
"""

from __future__ import annotations

from nicegui import ui

from engine.commands import InputRejected, ShareLinks
from engine.people import Viewer
from ledger.errors import StoreError
from ui.format import date_time
from ui.notices import notice
from ui.style import add_style

AUDIENCE = {"anyone": "anyone with the link", "members": "signed-in members"}


class SharedLinksPage:
    def __init__(self, links: ShareLinks, viewer: Viewer, everyone: bool) -> None:
        self.links, self.viewer = links, viewer
        self.everyone = everyone and viewer.admin

    async def build(self) -> None:
        add_style()
        ui.page_title("Shared links · Ledger Chat")
        with ui.header().classes("lc-header items-center gap-2 px-3 py-1 no-wrap"):
            ui.button(icon="arrow_back", on_click=lambda: ui.navigate.to("/")).props(
                'flat round dense color=white aria-label="Back"'
            )
            ui.label("Shared links").classes("text-lg font-medium")
        with ui.column().classes("w-full max-w-3xl mx-auto gap-3 px-3"):
            ui.label(
                "Each link shows a read-only snapshot of a chat. Update moves it to the chat as it is now; Revoke "
                "makes it open nothing, at once."
            ).classes("lc-meta")
            self.box = ui.column().classes("w-full gap-2").mark("shared-links")
        await self.refresh()

    async def refresh(self) -> None:
        try:
            listed = await self.links.mine(self.viewer)
        except StoreError as exc:
            notice(f"The links cannot be read just now ({exc}).", "negative")
            return
        if not self.everyone:
            listed = [(link, conv) for link, conv in listed if self.viewer.sees(link.owner)]
        self.box.clear()
        with self.box:
            if not listed:
                ui.label("No shared links.").classes("lc-meta").mark("no-links")
            for link, conv in listed:
                share = conv.shares[link.share_id]
                expiry = f"expires {date_time(share.expires)}" if share.expires else "does not expire"
                details = " · ".join(
                    p
                    for p in (
                        f"snapshot of {date_time(share.updated_ts)}",
                        AUDIENCE.get(share.audience, share.audience),
                        "tool details" if share.tools else "",
                        "attachments" if share.attachments else "",
                        expiry,
                        f"opened {share.opens} time{'' if share.opens == 1 else 's'}",
                        f"by {link.owner}" if self.everyone and link.owner else "",
                    )
                    if p
                )
                with ui.card().classes("w-full").props(f'flat bordered data-share="{link.share_id}"'):
                    ui.label(conv.title or "New conversation").classes("font-medium")
                    ui.label(details).classes("text-sm lc-meta").mark("share-details")
                    with ui.row().classes("gap-2"):
                        cid, sid = link.conversation_id, link.share_id
                        if self.viewer.sees(link.owner):
                            ui.button("Update the link", on_click=lambda c=cid, s=sid: self._update(c, s)).props(
                                "outline no-caps dense"
                            ).mark("share-update")
                        ui.button("Revoke", on_click=lambda c=cid, s=sid: self._revoke(c, s)).props(
                            "outline no-caps dense color=negative"
                        ).mark("share-revoke")

    async def _update(self, cid: str, share_id: str) -> None:
        try:
            await self.links.update(cid, share_id, self.viewer)
        except (InputRejected, StoreError) as exc:
            notice(str(exc), "negative")
            return
        notice("The link now shows the chat as it is now.", "positive")
        await self.refresh()

    async def _revoke(self, cid: str, share_id: str) -> None:
        try:
            await self.links.revoke(cid, share_id, self.viewer)
        except (InputRejected, StoreError) as exc:
            notice(str(exc), "negative")
        else:
            notice("Revoked: the link opens nothing any more.", "positive")
        await self.refresh()
