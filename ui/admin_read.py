"""An admin's read of someone's conversations (``/admin/read``), only in team mode started with
``--admin-can-read``; every read is on the owner's record.

Guarantees:
- Only an admin of such a deployment gets these pages; anyone else, and every other deployment, gets the same
  "not found" page as an unknown address.
- ``/admin/read`` lists the accounts, and for the one chosen (``?person=NAME``) their chats by when they began and
  were last active, never by title or text: opening one is the read.
- ``/admin/read/{id}`` first records the read (``engine.commands.read_as_admin``: ``read_by`` in the owner's
  ledger, shown in their audit panel), then shows the conversation as text, read-only: nothing on the page
  changes it. A read that cannot be recorded shows nothing of it, with the reason; a missing or deleted
  conversation reads as one that does not exist.
- The conversation is shown as plain text (``ui.export.conversation_markdown``, in a label): nothing in it is
  rendered as HTML or loads anything.
"""

from __future__ import annotations

import asyncio
from urllib.parse import quote

from nicegui import ui

from engine.commands import Engine, chats_of, read_as_admin
from engine.people import People, Person
from ledger.errors import StoreError
from ui.export import conversation_markdown
from ui.format import date_time
from ui.style import add_style

RECORDED = "You are reading {owner}'s chat as an admin. This read is recorded in their ledger and shown to them."


def reader(people: People | None, person: Person | None, admin_can_read: bool) -> tuple[People, Person] | None:
    """(the accounts, the admin) when ``person`` may read others' chats here; None: the page is not found."""
    if people is None or person is None or not person.admin or not admin_can_read:
        return None
    return people, person


def _header(title: str, back: str) -> None:
    ui.page_title(f"{title} · Ledger Chat")
    with ui.header().classes("lc-header items-center gap-2 px-3 py-1 no-wrap"):
        ui.button(icon="arrow_back", on_click=lambda: ui.navigate.to(back)).props(
            'flat round dense color=white aria-label="Back"'
        )
        ui.label(title).classes("text-lg font-medium")


async def chats_page(engine: Engine, people: People, chosen: str | None) -> None:
    """The accounts, and the chosen one's chats (when, not what)."""
    add_style()
    _header("Read a person's chats", "/admin/users")
    accounts = await asyncio.to_thread(people.accounts)  # the store is read off the event loop
    with ui.column().classes("w-full max-w-xl mx-auto gap-3 px-3"):
        ui.label("Opening a chat is recorded in its owner's ledger and shown in their audit panel.").classes("lc-meta")
        with ui.row().classes("gap-2").mark("read-accounts"):
            for account in accounts:
                flat = "" if account.name == chosen else "flat "
                ui.button(
                    account.display or account.name,
                    on_click=lambda _, n=account.name: ui.navigate.to(f"/admin/read?person={quote(n)}"),
                ).props(f"{flat}no-caps dense")
        owner = next((a for a in accounts if a.name == chosen), None)
        if owner is None:
            return
        lines = chats_of(engine, owner.person)
        with ui.column().classes("w-full gap-1").mark("read-chats"):
            if not lines:
                ui.label(f"{owner.display or owner.name} has no chats.").classes("lc-meta")
            for line in lines:
                with ui.row().classes("items-baseline gap-2 w-full").props(f'data-chat="{line.conversation_id}"'):
                    ui.label(f"Begun {date_time(line.created_ts)} · last active {date_time(line.updated_ts)}").classes(
                        "text-sm"
                    )
                    ui.space()
                    ui.button(
                        "Read", on_click=lambda _, c=line.conversation_id: ui.navigate.to(f"/admin/read/{c}")
                    ).props(f'outline no-caps dense aria-label="Read the chat begun {line.created_ts[:16]}"')


async def chat_page(engine: Engine, people: People, admin: Person, cid: str) -> None:
    """One conversation, its read recorded first."""
    add_style()
    _header("Reading a chat", "/admin/read")
    with ui.column().classes("w-full max-w-3xl mx-auto gap-3 px-3"):
        try:
            conv = await read_as_admin(engine, cid, admin.id, admin.name)
        except StoreError as exc:
            ui.label(f"Nothing is shown: this read could not be recorded ({exc}).").classes("lc-error-text").props(
                'role="alert"'
            ).mark("read-refused")
            return
        if conv is None:
            ui.label("That conversation does not exist (it may have been deleted).").mark("not-found")
            return
        accounts = await asyncio.to_thread(people.accounts)
        owner = next((a.display or a.name for a in accounts if a.person == conv.owner), conv.owner or "nobody")
        ui.label(RECORDED.format(owner=owner)).classes("lc-meta").props('role="status"').mark("read-recorded")
        ui.label(conversation_markdown(conv)).classes("whitespace-pre-wrap break-words w-full").mark("read-text")
