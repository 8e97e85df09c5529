"""Which attached MCP resources their servers said changed (``notifications/resources/updated``), and asking the
servers to say so: state a hub owns (``ToolHub.watch``), per server and URI, with listeners the open pages register.

Guarantees:
- ``changed(server, uri)`` is true from the moment the server said ``uri`` changed (``mark``: a connection's
  message handler, ``engine.tools.mcp_server``, or a ``subscriptions/listen`` stream) until the app reads it again
  (``fetched``: an "@" attach or a Refresh got its current bytes). Nothing here touches the ledger or a sent
  message: a mark is shown beside a sent chip (``ui.resource_refresh``), the message stays as it was sent.
- ``listen(listener, alive)`` calls ``listener(server, uri, changed)`` at every change of that state, until
  ``alive()`` is false (then it is dropped, at the next change or the next ``listen``); a listener that raises is
  logged and dropped, never an error for the others.
- ``watch(server, session, uri)`` asks the server once per connection to tell of changes to ``uri``: before
  2026-07-28, with ``resources.subscribe`` in its capabilities, ``resources/subscribe``; on 2026-07-28, one
  ``subscriptions/listen`` stream per server holding every watched URI, opened again (holding them all) when a new
  one is watched. A server that offers neither is asked nothing; a refusal or a silence is logged, never raised.
  ``resume(server, session)`` asks a new connection (a restarted server) for every URI watched on that server.
- The server names here are the watched names: a configured server's own, a person's connection to a remote
  server ``keyed(server, person)``.
- ``settled()`` returns when every background ``watch``/``resume`` (``spawn``) begun so far has asked what it
  asks; ``close()`` ends the listen streams and the pending requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger("ledger_chat.tools")
MODERN = "2026-07-28"  # from this revision ``resources/subscribe`` is gone: ``subscriptions/listen`` instead
ASK_SECONDS = 30.0
Listener = Callable[[str, str, bool], None]  # (server, uri, changed)


class ResourceWatch:
    def __init__(self) -> None:
        self._changed: set[tuple[str, str]] = set()
        self._watched: dict[str, set[str]] = {}  # server -> every URI the app watches there
        self._asked: dict[str, tuple[Any, set[str]]] = {}  # server -> (session, URIs it was asked about)
        self._streams: dict[str, tuple[Any, frozenset[str], asyncio.Task[None]]] = {}  # server -> its listen stream
        self._listeners: list[tuple[Listener, Callable[[], bool]]] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self.how: dict[str, str] = {}  # server -> how it was asked ("subscribe", "listen"); none: not asked

    # --- the state and its listeners ---------------------------------------------------------------------------

    def changed(self, server: str, uri: str) -> bool:
        return (server, uri) in self._changed

    def mark(self, server: str, uri: str) -> None:
        """``server`` said ``uri`` changed."""
        if (server, uri) not in self._changed:
            self._changed.add((server, uri))
            self._tell(server, uri, True)

    def fetched(self, server: str, uri: str) -> None:
        """The app read ``uri`` from ``server`` again: what it holds now is current."""
        if (server, uri) in self._changed:
            self._changed.discard((server, uri))
            self._tell(server, uri, False)

    def listen(self, listener: Listener, alive: Callable[[], bool]) -> None:
        self._listeners = [(f, a) for f, a in self._listeners if a()]
        self._listeners.append((listener, alive))

    def _tell(self, server: str, uri: str, changed: bool) -> None:
        kept: list[tuple[Listener, Callable[[], bool]]] = []
        for listener, alive in self._listeners:
            if not alive():
                continue
            try:
                listener(server, uri, changed)
            except Exception:  # noqa: BLE001 - one page's failure never stops another's mark
                log.exception("a listener of changed resources failed; dropped")
                continue
            kept.append((listener, alive))
        self._listeners = kept

    # --- asking the servers ---------------------------------------------------------------------------------------

    def watched(self, server: str) -> frozenset[str]:
        return frozenset(self._watched.get(server, ()))

    async def watch(self, server: str, session: Any, uri: str) -> None:
        self._watched.setdefault(server, set()).add(uri)
        await self._ask(server, session, {uri})

    async def resume(self, server: str, session: Any) -> None:
        """A new connection to ``server``: ask it about every URI watched there."""
        if self._watched.get(server):
            await self._ask(server, session, set(self._watched[server]))

    def spawn(self, coro: Any) -> None:
        """Run ``coro`` (a ``watch`` or ``resume``) in the background; it never raises."""
        task = asyncio.get_running_loop().create_task(coro, name="watch resources")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def settled(self) -> None:
        """Wait until every ``watch`` and ``resume`` begun so far has asked what it asks (streams stay open)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self) -> None:
        tasks = [task for _, _, task in self._streams.values()] + list(self._tasks)
        self._streams.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _ask(self, server: str, session: Any, uris: set[str]) -> None:
        capabilities = getattr(session, "server_capabilities", None)
        resources = getattr(capabilities, "resources", None)
        if resources is None or not resources.subscribe:
            return  # it offers no subscriptions: nothing asked, never an error
        if (session.protocol_version or "") >= MODERN:
            self._listen(server, session)
            return
        before, asked = self._asked.get(server, (None, set()))
        if before is not session:
            asked = set()
            self._asked[server] = (session, asked)
        for uri in sorted(uris - asked):
            asked.add(uri)
            try:
                await asyncio.wait_for(_subscribe(session, uri), ASK_SECONDS)
            except Exception as exc:  # noqa: BLE001 - a refusal is a log line, the chip just gets no mark
                asked.discard(uri)
                log.info("%s did not subscribe to %s: %s", server, uri, exc)
                continue
            self.how[server] = "subscribe"

    def _listen(self, server: str, session: Any) -> None:
        """Open (again) ``server``'s one listen stream, holding every URI watched there."""
        uris = frozenset(self._watched.get(server, ()))
        old = self._streams.get(server)
        if old is not None and old[0] is session and old[1] >= uris and not old[2].done():
            return  # its stream holds them all already
        if old is not None:
            old[2].cancel()
        task = asyncio.get_running_loop().create_task(
            self._stream(server, session, sorted(uris)), name=f"listen {server}"
        )
        self._streams[server] = (session, uris, task)

    async def _stream(self, server: str, session: Any, uris: list[str]) -> None:
        from mcp.client.subscriptions import ResourceUpdated, listen

        try:
            async with listen(session, resource_subscriptions=uris) as stream:
                self.how[server] = "listen"
                async for event in stream:
                    if isinstance(event, ResourceUpdated):
                        self.mark(server, event.uri)
        except Exception as exc:  # noqa: BLE001 - a refused or lost stream: logged; a new watch opens one again
            log.info("the listen stream of %s ended: %s", server, exc)
        finally:
            current = self._streams.get(server)
            if current is not None and current[2] is asyncio.current_task():
                with contextlib.suppress(KeyError):
                    del self._streams[server]


def keyed(server: str, person: str | None) -> str:
    """The name a person's own connection to a remote server is watched under: the server's for nobody (personal
    mode), else ``<server> for <person>``, so no person's URIs are asked of, or marked by, another's connection."""
    return server if person is None else f"{server} for {person}"


async def _subscribe(session: Any, uri: str) -> None:
    """``resources/subscribe`` (``ClientSession.subscribe_resource`` without its warning that 2026-07-28 removed
    it: only a session on an earlier revision is asked)."""
    from mcp.types import EmptyResult, SubscribeRequest, SubscribeRequestParams

    await session.send_request(SubscribeRequest(params=SubscribeRequestParams(uri=uri)), EmptyResult)
