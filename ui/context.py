"""What the pages of one process share: the engine (once started) and how to name the model.

Guarantees: pages never touch a store or litellm; they read the engine's state and call its operations only.
``main.py`` builds one ``PageContext``, hands it to ``ui.pages.register_pages`` and fills in the engine at
start-up, before the first page is served. ``current()`` returns it (tests read the engine through it). What
changes outside any conversation is polled once for all pages (``ui.watch``): the data folder's health every
``HEALTH_SECONDS``, the tool servers every ``TOOLS_SECONDS``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.commands import Engine
from engine.tools import ServerHealth
from store.health import StoreHealth
from ui.health_banner import shown
from ui.watch import Watch

HEALTH_SECONDS = 0.25  # a write that fails shows on every open page within this time
TOOLS_SECONDS = 1.0  # tool servers start, fail and restart outside any conversation


@dataclass
class PageContext:
    model_label: str
    demo: bool = False
    engine: Engine | None = None
    drafts: dict[str, str] = field(default_factory=dict)  # a branched chat's message box text, taken once
    health: Watch[StoreHealth] = field(init=False)
    tools: Watch[tuple[ServerHealth, ...]] = field(init=False)

    def __post_init__(self) -> None:
        self.health = Watch(lambda: shown(self.require_engine().health()), HEALTH_SECONDS)
        self.tools = Watch(lambda: self.require_engine().tool_health(), TOOLS_SECONDS)

    def require_engine(self) -> Engine:
        if self.engine is None:
            raise RuntimeError("the engine is not started yet")
        return self.engine


_CURRENT: list[PageContext] = []


def install(context: PageContext) -> None:
    _CURRENT[:] = [context]


def current() -> PageContext:
    if not _CURRENT:
        raise RuntimeError("ui.pages.register_pages() was not called")
    return _CURRENT[0]
