"""Who is acting: the signed-in person on whose behalf the code now running was started.

Guarantees: ``acting()`` is the person id (``local:<name>``) the front door (``ui.guard``) or the socket's event
check (``ui.socket_owner``) set for the request, page or event being served, and ``None`` in personal mode and in
work nobody asked for (start-up, timers, another instance). It is a context variable, so a task started while
serving a person carries that person and nothing else does. Command events take their actor from it when they
are made (``engine.commands``); the reducer never reads it.

``Viewer`` is the other half: what a page or a route may show is decided by the person it was opened for
(explicitly, never by the context variable: a timer's refresh runs without one).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

_ACTING: ContextVar[str | None] = ContextVar("ledger_chat_acting", default=None)


def acting() -> str | None:
    return _ACTING.get()


@contextmanager
def acting_as(person: str | None) -> Iterator[None]:
    token = _ACTING.set(person)
    try:
        yield
    finally:
        _ACTING.reset(token)


def set_acting(person: str | None) -> None:
    """Set it for the rest of the current task (the front door, for the request it serves)."""
    _ACTING.set(person)


@dataclass(frozen=True, slots=True)
class Viewer:
    """Whose conversations a page, a route or an export may reach: in personal mode (``team`` false) every one;
    in team mode only those whose owner is ``person`` (a page without a person reaches none). Shared things
    (owner None: presets an admin shares) everyone uses; only an ``admin`` changes them."""

    team: bool = False
    person: str | None = None
    admin: bool = False

    def sees(self, owner: str | None) -> bool:
        return not self.team or (self.person is not None and owner == self.person)

    def uses(self, owner: str | None) -> bool:
        """A thing that is ``owner``'s own, or shared (None), is one this viewer may use."""
        return owner is None or self.sees(owner)

    def changes(self, owner: str | None) -> bool:
        """Whether this viewer may change (or delete) a thing that is ``owner``'s own, or shared (None)."""
        return self.admin if owner is None and self.team else self.sees(owner)


PERSONAL = Viewer()


def for_nobody(
    spawn: Callable[[Coroutine[Any, Any, None], str], asyncio.Task[None]],
) -> Callable[[Coroutine[Any, Any, None], str], asyncio.Task[None]]:
    """``spawn``, with every task it starts acting for nobody: what the engine starts on its own (an attempt's run,
    its timeout, a reaction to an end) is not a command, even when a person's command started it."""

    def spawning(coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        return spawn(_as_nobody(coro), name)

    return spawning


async def _as_nobody(coro: Coroutine[Any, Any, None]) -> None:
    _ACTING.set(None)  # this task's own copy of the context: the caller's is untouched
    await coro
