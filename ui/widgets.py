"""Small parts the message views share: actions a view may ask for, the ‹ n/m › switcher, local times.

Guarantees: every button has an accessible name and a marker; a switcher's arrows are disabled (and look it) at
either end and while ``locked``; times are sent as a UTC fallback with the instant, which the page's script
shows in the browser's time zone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from nicegui import ui

from ui.approval_card import Decide
from ui.format import Clock
from ui.tool_descriptions import Describe


@dataclass(frozen=True)
class Actions:
    """What a message view may ask the page to do (each goes through the engine)."""

    retry: Callable[[str, str | None], Awaitable[None]]
    select: Callable[[str, str], None]
    audit: Callable[[str], None]
    decide: Decide  # a tool call's Run (for this call, this chat or this server) or Skip
    edit: Callable[[str, str], Awaitable[bool]]
    select_version: Callable[[str], None]
    branch: Callable[[str], None]
    open_chat: Callable[[str], object]
    models: tuple[str, ...] = ()
    answer: Callable[[str, str, dict[str, Any] | None], None] | None = None  # a tool's question (question_form)
    compact_retry: Callable[[str], Awaitable[None]] | None = None  # an answer refused as too long (ui.compaction_view)
    retry_summary: Callable[[str], Awaitable[None]] | None = None  # a compaction that was stopped or failed
    presets: Callable[[], tuple[tuple[str, str], ...]] = lambda: ()  # (id, name) of every agent preset
    preset_name: Callable[[str, int], str | None] = lambda preset_id, version: None  # a version's name
    retry_preset: Callable[[str, str], Awaitable[None]] | None = None  # Retry with another preset
    continue_answer: Callable[[str], Awaitable[object]] | None = None  # Continue a cut-short answer
    describe: Describe | None = None  # a tool's description now, for its approval card (ui.tool_descriptions)


class Switcher:
    """‹ n/m ›: step through versions; ``on_step(delta)`` is called with -1 or +1. Its buttons are built the first
    time there is more than one version (most messages never have a second: a long chat stays light)."""

    def __init__(self, what: str, marker: str, on_step: Callable[[int], None]) -> None:
        self.what, self.marker, self.on_step = what, marker, on_step
        self.root = ui.row().classes("items-center gap-1 lc-meta lc-switcher")
        self.root.set_visibility(False)
        self.built = False

    def _build(self) -> None:
        what, marker, on_step = self.what, self.marker, self.on_step
        with self.root:
            self.prev = (
                ui.button(icon="chevron_left", on_click=lambda: on_step(-1))
                .props(f'flat dense round size=sm aria-label="Previous {what}"')
                .mark(f"{marker}-prev")
            )
            self.label = ui.label("").mark(f"{marker}-label")
            self.next = (
                ui.button(icon="chevron_right", on_click=lambda: on_step(1))
                .props(f'flat dense round size=sm aria-label="Next {what}"')
                .mark(f"{marker}-next")
            )
        self.built = True

    def show(self, number: int, total: int, *, locked: bool = False) -> None:
        self.root.set_visibility(total > 1)
        if total <= 1 and not self.built:
            return
        if not self.built:
            self._build()
        self.label.set_text(f"{number}/{total}")
        self.prev.set_enabled(number > 1 and not locked)
        self.next.set_enabled(number < total and not locked)


class TimeLabel(ui.label):
    """A moment, shown in the browser's local time zone (the page's script rewrites the UTC fallback)."""

    def __init__(self, value: Clock | None = None, prefix: str = "") -> None:
        super().__init__("")
        self.prefix = prefix
        self.classes("lc-meta lc-time")
        self.show(value)

    def show(self, value: Clock | None) -> None:
        self.props["data-lc-time"] = value.iso if value else ""
        self.props["data-lc-prefix"] = self.prefix
        self.set_text(f"{self.prefix}{value.text}" if value else "")
        self.set_visibility(value is not None)
