"""The "always allow" grants in the Tools panel: this chat's and every server's, each with a Revoke button.

Guarantees: a projection of ``engine.commands.grants`` (chat grants folded from the conversation's ledger, server
grants read from the grant store off the event loop; in team mode only the page's person's); re-read when the
chat shown or its approvals changed, and after a revoke; each row carries ``data-grant`` (``chat`` | ``server``)
and ``data-tool``, and its button's accessible name says what it revokes; a revoked tool asks again at its next
call. Nothing is shown when there is no grant. Each list read is also given to ``on_grants`` (the Tools panel
marks a tool whose description changed since its grant).
"""

from __future__ import annotations

from collections.abc import Callable

from nicegui import background_tasks, ui

from engine.commands import Engine, GrantView, chat_grants, revoke, server_grants
from ledger.errors import StoreError
from ledger.state import ConversationState
from ui.notices import notice


class GrantsPanel:
    def __init__(
        self, engine: Engine, person: str | None, on_grants: Callable[[tuple[GrantView, ...]], None] | None = None
    ) -> None:
        self.engine, self.person = engine, person  # team mode: whose server grants (None: personal mode's)
        self.on_grants = on_grants  # the Tools panel marks a tool changed since its grant
        self.cid: str | None = None
        self._seen: object = None
        self._shown: tuple[GrantView, ...] | None = None
        self.root = ui.column().classes("w-full gap-1 lc-grants").mark("tool-grants")
        self.root.set_visibility(False)

    def follow(self, cid: str | None, conv: ConversationState | None) -> None:
        """The page rendered ``conv``: read the grants again when what they depend on changed."""
        live = conv.live_attempt() if conv is not None else None  # a grant is only ever given while one runs
        answers = sum(1 for c in live.tool_calls.values() if c.approval) if live is not None else -1
        seen = (cid, tuple(conv.grants.items()) if conv else (), answers)
        if seen == self._seen:
            return
        self._seen, self.cid = seen, cid
        background_tasks.create(self.reload(), name="tool grants")

    async def reload(self) -> None:
        try:
            everywhere = await server_grants(self.engine, self.person)
        except StoreError as exc:
            notice(f"The server grants could not be read: {exc}", "warning")
            everywhere = ()
        self._show((*chat_grants(self.engine, self.cid), *everywhere))

    def _show(self, grants: tuple[GrantView, ...]) -> None:
        if self.on_grants is not None:
            self.on_grants(grants)
        if grants == self._shown:
            return
        self._shown = grants
        self.root.clear()
        self.root.set_visibility(bool(grants))
        with self.root:
            ui.label("Always allowed").classes("text-sm font-medium")
            for grant in grants:
                where = "in this chat" if grant.scope == "chat" else f"on {grant.server}"
                with ui.row().classes("items-center gap-1 no-wrap w-full") as row:
                    row.props["data-grant"] = grant.scope
                    row.props["data-tool"] = grant.tool
                    ui.label(f"{grant.tool} {where}").classes("text-sm break-words").tooltip(
                        f"Bound to this version of the tool ({grant.grant_hash[:12]}…): a changed tool asks again"
                    )
                    ui.space()
                    button = ui.button("Revoke", on_click=lambda g=grant: self._revoke(g)).props("no-caps dense flat")
                    button.props["aria-label"] = f"Revoke: always allow {grant.tool} {where}"
                    button.mark("grant-revoke")

    async def _revoke(self, grant: GrantView) -> None:
        try:
            done = await revoke(self.engine, self.cid, grant, self.person)
        except StoreError as exc:
            notice(f"Not revoked: {exc}", "warning")
            return
        if not done:
            notice("That grant was already revoked.", "info")
        await self.reload()
