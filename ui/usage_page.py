"""The usage page (``/usage``): what a person's model requests cost, by day, model and status, with the limit in
force; for an admin, every person's (``ui.usage_admin``); and ``/usage.csv``, the same rows to download.

Guarantees:
- Everything shown is folded from the ledger (``engine.spend``: every attempt, answers, titles, compactions,
  continuations, stopped, failed and re-sent requests included), read off the event loop; nothing is counted
  beside it. A stopped answer's line carries its partial cost ("stopped: partial cost"); an amount made from
  locally counted tokens is marked ``~`` and the page says what that means; an unknown price is said, never $0.
  What a deleted chat spent stays counted, on lines of its own marked "from a deleted chat".
- A person sees their own usage only (personal mode: the one person's); the admins' table is shown to admins
  only. ``/usage.csv`` is checked by the guard (``ui.guard``) like every route and answers the request's person's
  rows, every person's only to an admin asking ``?everyone=1`` (anyone else: 404, as an unknown address).
- Periods are UTC days and months; the limit line names the reset time.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from nicegui import app, ui
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from engine.commands import Engine
from engine.people import Viewer
from engine.spend import ANYONE, PERIODS, Line, SpendGuard, by_day, csv_text, describe, overall, period_start, spent
from ui.admin_users import not_found
from ui.context import PageContext, viewer_of
from ui.money import cost_words
from ui.style import add_style
from ui.usage_admin import everyone

STATUS_WORDS = {"complete": "complete", "stopped": "stopped: partial cost", "failed": "failed", "running": "running"}
ESTIMATE = "~ an estimate: tokens counted here because the provider reported none (every stopped answer)."


def guard_of(engine: Engine) -> SpendGuard:
    guard = engine.settings.spend
    assert guard is not None, "the engine is built with its spend guard (engine.commands.assembly)"
    return guard


class UsagePage:
    def __init__(self, context: PageContext) -> None:
        self.context, self.engine = context, context.require_engine()
        self.viewer = context.viewer()

    async def build(self) -> None:
        add_style()
        if self.viewer.team and self.viewer.person is None:
            return not_found()
        ui.page_title("Usage · Ledger Chat")
        with ui.header().classes("lc-header items-center gap-2 px-3 py-1 no-wrap"):
            ui.button(icon="arrow_back", on_click=lambda: ui.navigate.to("/")).props(
                'flat round dense color=white aria-label="Back to the chats"'
            )
            ui.label("Usage").classes("text-lg font-medium")
        guard, person = guard_of(self.engine), self.viewer.person
        rows = await guard.book.rows_async(person)
        with ui.column().classes("w-full max-w-xl mx-auto gap-3 px-3").mark("usage"):
            ui.label(await limit_words(guard, person)).mark("usage-limit")
            lines(by_day(rows), overall(rows))
            ui.label(ESTIMATE).classes("lc-meta")
            ui.link("Download as CSV", "/usage.csv").props("download").mark("usage-csv")
            if self.viewer.admin:
                await everyone(guard)


async def limit_words(guard: SpendGuard, person: str | None) -> str:
    """ "Your limit: $0.05/day. Spent today: $0.03; this month: $0.05. Days reset at 00:00 UTC." """

    def read() -> str:
        limit, now = guard.limit_of(person), guard.clock()
        rows = guard.book.rows(person)
        used = {p: spent([r for r in rows if r.ts >= period_start(p, now).isoformat(timespec="milliseconds")])
                for p in PERIODS}  # fmt: skip
        day, month = (cost_words(used[p].cost) or "$0" for p in PERIODS)
        cap = "no limit" if limit.none else describe(limit)
        return f"Your limit: {cap}. Spent today: {day}; this month: {month}. Days and months start at 00:00 UTC."

    return await asyncio.to_thread(read)


def lines(found: list[Line], whole: Line) -> None:
    """The table: one line per (day, model, status, deleted chat or not), then the total."""
    with ui.column().classes("w-full gap-1").mark("usage-lines"):
        if not found:
            ui.label("No model requests yet.").classes("lc-meta")
        for line in found:
            day, model, status, deleted = line.key
            with ui.row().classes("items-center gap-2 w-full").props(f'data-status="{status}"') as row:
                ui.label(day).classes("font-medium")
                ui.label(model).classes("lc-meta")
                ui.label(STATUS_WORDS.get(status, status)).classes("lc-chip")
                if deleted:
                    row.props('data-deleted="yes"')
                    ui.label("from a deleted chat").classes("lc-chip")
                ui.space()
                ui.label(f"{line.attempts} × · {line.input_tokens + line.output_tokens:,} tokens").classes("lc-meta")
                ui.label(cost_words(line.cost) or "$0").classes("font-medium")
        with ui.row().classes("items-center gap-2 w-full").mark("usage-total"):
            ui.label("Total").classes("font-medium")
            ui.space()
            ui.label(f"{whole.attempts} requests · {whole.input_tokens + whole.output_tokens:,} tokens").classes(
                "lc-meta"
            )
            ui.label(cost_words(whole.cost) or "$0").classes("font-medium")


def register_usage(context: PageContext) -> None:
    """``/usage`` and ``/usage.csv`` (inside ``ui.pages.register_pages``: NiceGUI re-imports page modules)."""

    @app.get("/usage.csv")
    async def usage_csv(request: Request, everyone: str = "") -> Response:
        viewer: Viewer = viewer_of(context, request.scope)
        if (viewer.team and viewer.person is None) or (everyone and not (viewer.admin or not viewer.team)):
            return PlainTextResponse("There is nothing at this address.", status_code=404)
        guard = guard_of(context.require_engine())
        rows = await guard.book.rows_async(ANYONE if everyone else viewer.person)
        day = datetime.now(UTC).strftime("%Y-%m-%d")
        name = f"usage-{'everyone' if everyone else 'mine'}-{day}.csv"
        return Response(
            csv_text(rows).encode("utf-8"),
            media_type="text/csv; charset=utf-8",
            headers={"content-disposition": f'attachment; filename="{name}"'},
        )
