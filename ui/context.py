"""What the pages of one process share: the engine (once started) and how to name the model.

Guarantees: pages never touch a store or litellm; they read the engine's state and call its operations only.
``main.py`` builds one ``PageContext``, hands it to ``ui.pages.register_pages`` and fills in the engine at
start-up, before the first page is served. ``current()`` returns it (tests read the engine through it). What
changes outside any conversation is polled once for all pages (``ui.watch``): the data folder's health every
``HEALTH_SECONDS``, the tool servers every ``TOOLS_SECONDS``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.commands import Engine, ShareLinks
from engine.people import PERSONAL, People, Person, Viewer
from engine.tools import ServerHealth
from store.health import StoreHealth
from store.shares import ShareStore
from ui.health_banner import shown
from ui.watch import Watch

HEALTH_SECONDS = 0.25  # a write that fails shows on every open page within this time
TOOLS_SECONDS = 1.0  # tool servers start, fail and restart outside any conversation


@dataclass
class PageContext:
    model_label: str
    demo: bool = False
    engine: Engine | None = None
    people: People | None = None  # team mode (``--accounts local``): who may sign in; None in personal mode
    oidc: bool = False  # team mode with an OpenID Connect provider: nobody signs in with a password
    admin_can_read: bool = False  # team mode with ``--admin-can-read``: ``/admin/read`` (``ui.admin_read``)
    drafts: dict[str, str] = field(default_factory=dict)  # a branched chat's message box text, taken once
    share_store: ShareStore | None = None  # share links' lookup (``store.shares``); None: no sharing
    health: Watch[StoreHealth] = field(init=False)
    tools: Watch[tuple[ServerHealth, ...]] = field(init=False)
    _sharing: ShareLinks | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.health = Watch(lambda: shown(self.require_engine().health()), HEALTH_SECONDS)
        self.tools = Watch(lambda: self.require_engine().tool_health(), TOOLS_SECONDS)

    @property
    def team(self) -> bool:
        return self.people is not None

    def viewer(self) -> Viewer:
        """Whose conversations the page being built may reach: the person the front door let in
        (``ui.guard`` keeps them in the request's state), or every one in personal mode."""
        from nicegui import ui

        return viewer_of(self, ui.context.client.request.scope) if self.people is not None else PERSONAL

    def person(self) -> Person | None:
        """The signed-in person of the page being built (None in personal mode)."""
        from nicegui import ui

        return person_in(ui.context.client.request.scope)

    def sharing(self) -> ShareLinks | None:
        """The share links (``engine.commands.ShareLinks``) once the engine runs; None without a store for them."""
        if self.share_store is None or self.engine is None:
            return None
        if self._sharing is None:
            self._sharing = ShareLinks(self.engine, self.share_store, self.active)
        return self._sharing

    def active(self, owner: str | None) -> bool:
        """Whether a chat of ``owner``'s may be read through a link: personal mode, or an account that is enabled
        (a disabled or removed one's links answer as unknown ones). Reads the accounts' store."""
        if self.people is None:
            return True
        return any(a.person == owner and not a.disabled for a in self.people.accounts())

    def require_engine(self) -> Engine:
        if self.engine is None:
            raise RuntimeError("the engine is not started yet")
        return self.engine


def viewer_of(context: PageContext, scope: Mapping[str, Any]) -> Viewer:
    """``PageContext.viewer`` for a plain route (an export, a file): the person in the request's state."""
    if context.people is None:
        return PERSONAL
    person = person_in(scope)
    if person is None:
        return Viewer(team=True)
    return Viewer(team=True, person=person.id, admin=person.admin)


def person_in(scope: Mapping[str, Any]) -> Person | None:
    """The person ``ui.guard`` let in for this request (kept in its state), if any."""
    state = scope.get("state")
    found = state.get("person") if isinstance(state, dict) else None
    return found if isinstance(found, Person) else None


_CURRENT: list[PageContext] = []


def install(context: PageContext) -> None:
    _CURRENT[:] = [context]


def current() -> PageContext:
    if not _CURRENT:
        raise RuntimeError("ui.pages.register_pages() was not called")
    return _CURRENT[0]
