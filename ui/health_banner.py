"""The data folder's health on every page, live: a banner while saving fails, a card per problem found at opening.

Guarantees: one poll for the whole process reads ``engine.health()`` every ``ui.context.HEALTH_SECONDS`` and tells
the pages only when what they show changed (``shown``; server-side, and nothing crosses the websocket unless what is
shown changes), so a write that fails shows on every open page within that time, and the banner goes away by itself
after the next write that succeeds. A shared database that does not answer (``StoreHealth.unreachable``) shows
the same way, and goes away once it answers again. The saving banner cannot be dismissed (it is the truth about the
disk); each problem found when opening is shown once per page and can be dismissed.
"""

from __future__ import annotations

from dataclasses import replace

from nicegui import ui

from engine.commands import Engine
from store.health import StoreHealth
from ui.watch import Watch


class HealthBanner:
    def __init__(self, engine: Engine, health: Watch[StoreHealth]) -> None:
        self.engine = engine
        self._dismissed: set[str] = set()
        self._cards: tuple[str, ...] = ()
        with ui.column().classes("w-full gap-2"):
            with (
                (
                    ui.card()
                    .classes("w-full lc-danger")
                    .props('role=alert aria-live="assertive"')
                    .mark("saving-banner")
                ) as self.banner,
                ui.row().classes("w-full items-start no-wrap"),
            ):
                ui.icon("sync_problem", color="negative")
                self.reason = ui.label().classes("flex-grow break-words").mark("saving-reason")
            self.opening = ui.column().classes("w-full gap-2")
        self.banner.set_visibility(False)
        health.follow(self.show)

    def show(self, health: StoreHealth) -> None:
        self.banner.set_visibility(health.saving_fails is not None or health.unreachable is not None)
        if health.saving_fails is not None or health.unreachable is not None:
            text = saving_text(health)
            if self.reason.text != text:
                self.reason.set_text(text)
        shown = tuple(p.key for p in health.problems if p.kind == "opening" and p.key not in self._dismissed)
        if shown != self._cards:
            self._cards = shown
            self._rebuild(health)

    def _rebuild(self, health: StoreHealth) -> None:
        self.opening.clear()
        with self.opening:
            for problem in health.problems:
                if problem.key not in self._cards:
                    continue
                with (
                    ui.card().classes("w-full lc-warning").mark("problem"),
                    ui.row().classes("w-full items-start no-wrap"),
                ):
                    ui.icon("warning", color="orange")
                    ui.label(problem.message).classes("flex-grow break-words")
                    ui.button(icon="close", on_click=lambda key=problem.key: self._dismiss(key)).props(
                        'flat dense round aria-label="Dismiss"'
                    ).mark("dismiss-problem")

    def _dismiss(self, key: str) -> None:
        self._dismissed.add(key)
        self.show(shown(self.engine.health()))


def shown(health: StoreHealth) -> StoreHealth:
    """What the banner shows of ``health``: the count of unsaved events only while saving fails (while it works, that
    count changes with every chunk streamed and would tell every page of nothing new)."""
    return health if health.saving_fails is not None else replace(health, unsaved=0)


def saving_text(health: StoreHealth) -> str:
    if health.saving_fails is None:
        return (
            f"Saving is paused: {health.unreachable}. Nothing saved is lost; a message you send stays in the box "
            "until it can be saved. This goes away by itself once the database answers."
        )
    kept = f"{health.unsaved:,} event(s) are kept in memory" if health.unsaved else "Nothing is waiting"
    tries = f" (tried {health.failed_tries:,} times)" if health.failed_tries > 1 else ""
    return (
        f"Saving fails: {health.saving_fails}{tries}. {kept} and saved as soon as writing works again; "
        "sending new messages is paused until then."
    )
