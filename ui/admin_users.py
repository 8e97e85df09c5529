"""The accounts page (``/admin/users``, team mode, admins only): every account with its role and state, a form to
add one, and Disable / Enable and "Reset link" beside each.

Guarantees:
- Only an admin gets the page; anyone else (and personal mode) gets the same "not found" page as an unknown
  address, so the page's existence says nothing.
- Every change goes through ``engine.people`` on a worker thread (argon2id hashing is slow on purpose; the store may
  block); a refusal is a sentence next to the form, and what was typed stays except the password, which is cleared
  after every try. Disabling an account ends its sessions at once (its pages go to the sign-in page within
  seconds on every instance, its running answers stop: ``ui.sessions``); an admin cannot disable their own account
  here (the last admin could lock everyone out).
- "Reset link" (``--accounts local``, a local account) makes a one-time link to set a new password
  (``engine.people.ResetLinks``: once, within 24 h; the account's earlier link stops working) and shows it once, in a
  dialog with a Copy button, as this page's address plus ``ui.reset_page.RESET`` and the token; the dialog is removed
  from the page when it closes. A disabled account's is refused with a sentence.
- No hash is ever put on the page.
"""

from __future__ import annotations

import asyncio

from nicegui import ui

from engine.people import RESET_VALID, People, PeopleError, Person, ResetLinks
from ledger.errors import StoreError
from ui.notices import notice
from ui.reset_page import RESET
from ui.style import add_style

NOT_FOUND = "There is nothing at this address."


def not_found() -> None:
    """The page an address nobody may see here answers with: the same as an unknown address."""
    ui.page_title("Not found · Ledger Chat")
    ui.label(NOT_FOUND).classes("text-lg px-3 py-10").mark("not-found")


class AdminUsersPage:
    def __init__(
        self, people: People | None, person: Person | None, *, oidc: bool = False, can_read: bool = False
    ) -> None:
        self.people, self.person, self.oidc, self.can_read = people, person, oidc, can_read

    async def build(self) -> None:
        add_style()
        if self.people is None or self.person is None or not self.person.admin:
            return not_found()
        ui.page_title("Accounts · Ledger Chat")
        self.base = str(ui.context.client.request.base_url).rstrip("/")  # as this browser reached the server
        with ui.header().classes("lc-header items-center gap-2 px-3 py-1 no-wrap"):
            ui.button(icon="arrow_back", on_click=lambda: ui.navigate.to("/")).props(
                'flat round dense color=white aria-label="Back to the chats"'
            )
            ui.label("Accounts").classes("text-lg font-medium")
            if self.can_read:  # --admin-can-read: every read is recorded for its owner (ui.admin_read)
                ui.space()
                ui.button("Read a person's chats", on_click=lambda: ui.navigate.to("/admin/read")).props(
                    "flat no-caps dense color=white"
                )
        with ui.column().classes("w-full max-w-xl mx-auto gap-3 px-3"):
            self.rows = ui.column().classes("w-full gap-1").mark("accounts")
            with ui.card().classes("w-full").mark("add-account") as adding:
                ui.label("Add an account").classes("font-medium")
                self.name = ui.input("Username").props('autocomplete="off"').classes("w-full")
                self.password = ui.input("Password", password=True).props('autocomplete="new-password"')
                self.password.classes("w-full")
                self.admin = ui.checkbox("Admin (manages accounts)")
                self.problem = ui.label("").classes("lc-error-text").props('role="alert"')
                ui.button("Add", on_click=self.add).props("unelevated no-caps")
            adding.set_visibility(not self.oidc)  # with a provider, people sign in there: no passwords here
        await self.show()

    async def show(self) -> None:
        assert self.people is not None and self.person is not None
        accounts = await asyncio.to_thread(self.people.accounts)  # the store is read off the event loop
        self.rows.clear()
        with self.rows:
            for account in accounts:
                with ui.row().classes("items-center gap-2 w-full").props(f'data-account="{account.name}"'):
                    ui.label(account.display or account.name).classes("font-medium")
                    if account.display:  # an OpenID Connect account: named by the provider's claims
                        ui.label("signs in with the identity provider").classes("lc-meta")
                    ui.label("admin" if account.admin else "member").classes("lc-chip")
                    ui.label("disabled" if account.disabled else "active").classes("lc-meta")
                    ui.space()
                    if not self.oidc and ":" not in account.name:  # a provider's account has no password here
                        ui.button("Reset link", on_click=lambda _, a=account: self.reset(a.name)).props(
                            f'outline no-caps dense aria-label="Reset link for {account.name}"'
                        )
                    if account.person != self.person.id:  # never one's own account (the last admin's)
                        words = "Enable" if account.disabled else "Disable"
                        ui.button(words, on_click=lambda _, a=account: self.toggle(a.name, a.disabled)).props(
                            f'outline no-caps dense aria-label="{words} {account.name}"'
                        )

    async def add(self) -> None:
        assert self.people is not None
        name, password, admin = self.name.value or "", self.password.value or "", bool(self.admin.value)
        self.password.value = ""
        try:
            await asyncio.to_thread(self.people.add, name, password, admin=admin)
        except (PeopleError, StoreError) as refused:
            self.problem.text = str(refused)
            return
        self.problem.text, self.name.value, self.admin.value = "", "", False
        await self.show()

    async def toggle(self, name: str, disabled: bool) -> None:
        assert self.people is not None
        change = self.people.enable if disabled else self.people.disable
        try:
            await asyncio.to_thread(change, name)
        except (PeopleError, StoreError) as refused:
            self.problem.text = str(refused)
            return
        await self.show()

    async def reset(self, name: str) -> None:
        """Make a one-time link for ``name`` and show it once."""
        assert self.people is not None
        try:
            token = await asyncio.to_thread(ResetLinks(self.people).make, name)
        except (PeopleError, StoreError) as refused:
            self.problem.text = str(refused)
            return
        self.problem.text, link = "", self.base + RESET + token
        hours = RESET_VALID.total_seconds() / 3600
        with (
            ui.dialog().props(f'aria-label="Reset link for {name}"') as dialog,
            ui.card().classes("min-w-[320px]").mark("reset-link"),
        ):
            ui.label(f"A one-time link for {name}").classes("text-lg")
            ui.label(
                f"It sets a new password once, within {hours:g} hours, and signs {name} out everywhere. It is shown "
                "only now; a new link replaces it."
            ).classes("lc-meta")
            ui.input("One-time link", value=link).props("readonly").classes("w-full")

            def copy() -> None:
                ui.clipboard.write(link)
                notice("Copied", "positive")

            with ui.row().classes("justify-end w-full"):
                ui.button("Copy", on_click=copy).props("no-caps")
                ui.button("Done", on_click=dialog.close).props("flat no-caps")
        dialog.on_value_change(lambda e: None if e.value else dialog.delete())  # shown once: gone when closed
        dialog.open()
