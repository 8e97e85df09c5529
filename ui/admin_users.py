"""The accounts page (``/admin/users``, team mode, admins only): every account with its role and state, a form to
add one, and Disable / Enable beside each.

Guarantees:
- Only an admin gets the page; anyone else (and personal mode) gets the same "not found" page as an unknown
  address, so the page's existence says nothing.
- Every change goes through ``engine.people`` on a worker thread (argon2id hashing is slow on purpose; the store may
  block); a refusal is a sentence next to the form, and what was typed stays except the password, which is cleared
  after every try. Disabling an account ends its sessions at once (its pages go to the sign-in page within
  seconds on every instance, its running answers stop: ``ui.sessions``); an admin cannot disable their own account
  here (the last admin could lock everyone out).
- No hash is ever put on the page.
"""

from __future__ import annotations

import asyncio

from nicegui import ui

from engine.people import People, PeopleError, Person
from ledger.errors import StoreError
from ui.style import add_style

NOT_FOUND = "There is nothing at this address."


class AdminUsersPage:
    def __init__(self, people: People | None, person: Person | None, *, oidc: bool = False) -> None:
        self.people, self.person, self.oidc = people, person, oidc

    async def build(self) -> None:
        add_style()
        if self.people is None or self.person is None or not self.person.admin:
            ui.page_title("Not found · Ledger Chat")
            ui.label(NOT_FOUND).classes("text-lg px-3 py-10").mark("not-found")
            return
        ui.page_title("Accounts · Ledger Chat")
        with ui.header().classes("lc-header items-center gap-2 px-3 py-1 no-wrap"):
            ui.button(icon="arrow_back", on_click=lambda: ui.navigate.to("/")).props(
                'flat round dense color=white aria-label="Back to the chats"'
            )
            ui.label("Accounts").classes("text-lg font-medium")
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
