"""The admins' part of the usage page: every person's usage this month and in all, their limit in force, and a
field to set it ("$0.50/day, $10/month", "20000 tokens/day", "none"; empty: everyone's default), plus everyone's
default; a CSV of every person's rows.

Guarantees: shown only when the page's viewer is an admin (``ui.usage_page`` asks); limits are written to their
store beside the accounts (``store.limits`` through ``SpendGuard.limits``), off the event loop, and hold at the
next model request on every instance; a value that cannot be read is refused with a sentence beside its field and
nothing is stored.
"""

from __future__ import annotations

import asyncio

from nicegui import ui

from engine.spend import ANYONE, SpendGuard, by_person, describe, parse_limit
from ledger.errors import StoreError
from ui.money import cost_words

DEFAULT_KEY = "*"  # (``store.limits.DEFAULT``: the pages name no store)


async def everyone(guard: SpendGuard) -> None:
    rows = await guard.book.rows_async(ANYONE)
    stored = await asyncio.to_thread(guard.limits.limits)
    people = by_person(rows)
    known = {line.key[0] for line in people} | {key for key in stored if key != DEFAULT_KEY}
    ui.label("Everyone").classes("text-lg font-medium")
    with ui.column().classes("w-full gap-1").mark("usage-people"):
        limit_row(guard, DEFAULT_KEY, "Everyone's default", describe(stored.get(DEFAULT_KEY, guard.fallback)))
        for person in sorted(known):
            line = next((x for x in people if x.key[0] == person), None)
            used = "nothing yet" if line is None else f"{cost_words(line.cost) or '$0'} in {line.attempts} requests"
            own = stored.get(person)
            limit_row(guard, person, f"{person or 'no owner'}: {used}", describe(own) if own else "")
    ui.link("Download everyone's as CSV", "/usage.csv?everyone=1").props("download").mark("usage-csv-everyone")


def limit_row(guard: SpendGuard, key: str, words: str, value: str) -> None:
    with ui.row().classes("items-center gap-2 w-full").props(f'data-person="{key}"'):
        ui.label(words).classes("font-medium")
        ui.space()
        field = ui.input("Limit", value=value, placeholder="everyone's default" if key != DEFAULT_KEY else "none")
        field.props(f'dense aria-label="Spend limit of {key}"')
        problem = ui.label("").classes("lc-error-text").props('role="alert"')

        async def save() -> None:
            text = (field.value or "").strip()
            try:
                if not text and key != DEFAULT_KEY:
                    await asyncio.to_thread(guard.limits.remove, key)
                else:
                    await asyncio.to_thread(guard.limits.put, key, parse_limit(text))
            except (ValueError, StoreError) as refused:
                problem.text = str(refused)
                return
            problem.text = ""
            ui.notify("Saved: it holds from the next request", type="positive")

        ui.button("Save", on_click=save).props(f'outline no-caps dense aria-label="Save the limit of {key}"')
