"""The remote servers a person uses (``engine.tools.remote``), as sources of "/" prompts and "@" resources beside the
configured servers (``engine.tools.prompts``, ``engine.tools.resources``).

Guarantees:
- ``for_person(hub, person)`` is the hub a page of ``person`` reaches prompts and resources through: the app's
  configured servers and the remote servers ``person`` uses (``RemoteServers.visible``: in team mode the team's
  and their own, never another person's). Without remote servers (``--no-tools``, or a hub of no ``AppHub``) it is
  ``hub`` itself. A conversation's hub (``AppHub.of_chat``: its owner's, the ACP bridge's) is one already.
- ``live(hub)`` is each enabled remote server of the hub's person whose connection is up, through that person's own
  connection (``RemoteServers.connection_of``), as a ``Source``; it never starts one. A server's resources are
  watched under ``keyed(server, person)`` (``engine.tools.resource_watch``), so one person's watched URIs are never
  asked of another's connection.
- ``reach(hub)`` starts, asking nobody, the connections of the person's enabled servers that are not up (all at
  once) and waits for them at most ``REACH_SECONDS``: a server that needs no sign-in, or whose tokens the person
  holds, is up after it. It returns, by name, the servers not listed and why: ``SIGN_IN`` (the person must sign in
  first, or a sign-in of theirs to it waits for the browser) or ``STARTING`` (its connection is still starting: a
  start the menu stopped waiting for goes on). The menus show each as one disabled line; a server that could
  not be reached is left out (logged), never an error. Nothing here touches the ledger.
- ``watch_key(hub, server)`` is the name ``server``'s resources are watched under for the hub's person (a
  configured server's own name; a remote server's ``keyed``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from engine.tools.oauth_words import SignInNeeded
from engine.tools.remote import RemoteServers
from engine.tools.remote_hub import AppHub, PersonHub
from engine.tools.resource_watch import ResourceWatch, keyed

log = logging.getLogger("ledger_chat.remote")
REACH_SECONDS = 3.0  # how long a menu waits for the connections it starts (a slow one is listed as starting)
SIGN_IN, STARTING = "sign_in", "starting"  # why a server's prompts and resources are not listed (``reach``)
_starting: set[asyncio.Task[Any]] = set()  # starts a menu stopped waiting for: held until they end


@dataclass(frozen=True, slots=True)
class Source:
    """A running server a hub reaches: its name, SDK session, the record of its changed resources, and the name
    its resources are watched under there."""

    name: str
    session: Any
    watch: ResourceWatch
    key: str


def for_person(hub: Any, person: str | None) -> Any:
    if isinstance(hub, AppHub) and hub.remote is not None:
        return PersonHub(hub, hub.remote, person)
    return hub


def _remote(hub: Any) -> tuple[RemoteServers | None, str | None]:
    if isinstance(hub, PersonHub):
        return hub.remote, hub.person
    return None, None


def live(hub: Any) -> Iterator[Source]:
    remote, person = _remote(hub)
    if remote is None:
        return
    for server in remote.visible(person):
        if not server.enabled:
            continue
        connection, _ = remote.connection_of(person, server.name)
        session = connection.session if connection is not None else None
        if session is not None:
            yield Source(server.name, session, remote.watch, keyed(server.name, person))


async def reach(hub: Any) -> dict[str, str]:
    remote, person = _remote(hub)
    if remote is None:
        return {}
    waiting: dict[str, str] = {}
    starts: dict[asyncio.Task[Any], str] = {}
    for server in remote.visible(person):
        if not server.enabled:
            continue
        connection, starting = remote.connection_of(person, server.name)
        if starting:  # someone's start holds it (never waited for here): a sign-in waiting, or a slow server
            waiting[server.name] = SIGN_IN if remote.signins.waits_for(person, server.name) else STARTING
        elif connection is None:
            task = asyncio.create_task(remote.connect(person, server.name, None), name=f"reach {server.name}")
            starts[task] = server.name
    done, pending = await asyncio.wait(starts, timeout=REACH_SECONDS) if starts else (set(), set())
    for task in pending:  # still starting: it goes on (the menu opened again lists it), the menu does not wait
        waiting[starts[task]] = STARTING
        _starting.add(task)
        task.add_done_callback(_started)
    for task in done:
        error = task.exception()
        if isinstance(error, SignInNeeded):
            waiting[starts[task]] = SIGN_IN
        elif error is not None:  # unreachable, refused: the others are listed all the same
            log.info("the prompts and resources of %s are left out: %s", starts[task], error)
    return dict(sorted(waiting.items()))


def _started(task: asyncio.Task[Any]) -> None:
    _starting.discard(task)
    if not task.cancelled() and (error := task.exception()) is not None and not isinstance(error, SignInNeeded):
        log.info("a remote server the menu started could not be reached: %s", error)


def watch_key(hub: Any, server: str) -> str:
    remote, person = _remote(hub)
    configured = {h.name for owner in chain(hub) for h in owner.health()}
    if remote is None or server in configured or remote.named(person, server) is None:
        return server
    return keyed(server, person)


def chain(hub: Any) -> list[Any]:
    """``hub`` and the hubs below it (``base``), the app's first."""
    chain: list[Any] = []
    while hub is not None and hub not in chain:
        chain.append(hub)
        hub = getattr(hub, "base", None)
    return chain[::-1]
