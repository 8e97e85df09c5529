"""A tool's description as the model receives it, shown to the person: in the Tools panel and on an approval card.

Guarantees:
- ``description_box`` shows the description exactly as the server lists it, as text (a ``ui.label``: escaped by
  the page, never markdown or HTML: a description that carries ``<img onerror=…>`` or ``**…**`` shows those
  characters), collapsed under a title until opened, marked ``tool-description`` with ``data-tool``; the text is
  built when the box first opens (a page lists every tool's box: a collapsed one costs one element, not two).
- A description whose tool changed since the person's "always allow" (the grant's hash, which covers the name,
  description and input schema, is not the tool's hash now) is marked: ``data-changed="true"``, "changed since you
  allowed it" in its title, and it opens by itself.
- ``changed_tools(described, grants)`` is that comparison for the Tools panel: the tools of a server that a chat or
  server grant names with another hash.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from nicegui import ui

from engine.commands import GrantView
from engine.tools import ToolDescribed

Describe = Callable[[str, str], ToolDescribed | None]  # (server, tool) -> its description now
CHANGED = "changed since you allowed it"


def description_box(tool: str, description: str, *, changed: bool = False, title: str | None = None) -> ui.expansion:
    """The description as text, collapsed (open and marked when ``changed``)."""
    words = title or f"{tool}: what the model is told"
    if changed:
        words += f" · {CHANGED}"
    box = ui.expansion(words, value=changed).classes("lc-tool-part w-full").props("dense").mark("tool-description")
    box.props["data-tool"] = tool
    box.props["data-changed"] = "true" if changed else "false"
    text = description.strip() or "(the server gives no description)"

    def fill() -> None:
        if not box.default_slot.children:
            with box:
                ui.label(text).classes("lc-meta whitespace-pre-wrap break-words").mark("tool-description-text")

    if changed:
        fill()
    else:
        box.on_value_change(lambda e: fill() if e.value else None)
    return box


def changed_tools(server: str, described: Iterable[ToolDescribed], grants: Iterable[GrantView]) -> set[str]:
    """The tools of ``server`` granted for another version than the one listed now."""
    now = {d.name: d.grant_hash for d in described}
    return {g.tool for g in grants if g.server == server and g.tool in now and g.grant_hash != now[g.tool]}
