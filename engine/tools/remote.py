"""Remote tool servers people add while the app runs: a name and a streamable-HTTP URL, a connection per person
and server, and the sign-in each person makes (``engine.tools.oauth``).

Guarantees:
- ``add`` keeps a server in the store (``store.tokens``, never the ledger) only with a valid name no other server
  has (the configured ones, the person's own, the team's) and an ``http(s)`` URL; in team mode a team server
  (owner None) only by an admin, a personal one for its person; ``enable``, ``remove`` and ``sign_out`` likewise
  only by whoever may change it. Every refusal is one sentence (``RemoteRefused``). Who added a server, and who
  last switched it and when, are kept with it (what a conversation's ledger records, ``engine.turns.server_notes``).
- ``fresh`` reads the servers again when the store's stamp says someone sharing it (another instance on the same
  PostgreSQL) changed them; changes and every turn (``engine.tools.remote_hub``) look first.
- ``visible(person)`` is what a person uses: every server in personal mode; in team mode the team's and their own.
  Its tools are the ones it listed when last reached (kept with the server): they are offered before anyone signed
  in, and refreshed at every connection.
- ``call`` runs one call for one person: their connection to that server (started on first use, one start at a
  time per person and server; its start may need a sign-in, asked through the call with a deadline of
  ``START_SECONDS`` that pauses while the person signs in), with the call's ``CallAuth`` in context so a sign-in
  it needs shows on its card. What ended a sign-in is raised as ``SignInEnded`` (its status and words), a sign-in
  request that got no answer as the step that could not be reached; a dead connection is started again next time.
- Each connection's ``notifications/resources/updated`` marks ``(keyed(server, person), uri)`` in ``watch`` (the
  app's hub's, ``engine.tools.resource_watch``, when the app wires it): in team mode each person's connection is
  watched under its own name, so no URI one person watches is asked of, or marked by, another's; a new connection
  is asked again about the URIs watched under its name. ``connection_of`` says whether a person's connection is up
  or starting, starting none (the "/" and "@" menus use it: ``engine.tools.remote_context``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine.tools.config import NAME, ServerConfig
from engine.tools.elicitation import Ask, Deadline, TimedOut
from engine.tools.mcp_server import CallOutcome, MCPConnection, Progress, ServerUnavailable, ToolServerError, ToolSpec
from engine.tools.oauth import CURRENT, CallAuth, SignInAuth
from engine.tools.oauth_words import SignInEnded, unreachable
from engine.tools.resource_watch import ResourceWatch, keyed
from engine.tools.sign_ins import SignIns
from engine.tools.vault import Vault, VaultStorage
from store.blobs import BlobStore
from store.tokens import RemoteServer, RemoteStore

__all__ = ["Changer", "RemoteRefused", "RemoteServer", "RemoteServers"]

START_SECONDS = 30.0
DAY = 86400.0


class RemoteRefused(ValueError):
    """A change to the remote servers that is not allowed or not valid (one sentence)."""


@dataclass(frozen=True, slots=True)
class Changer:
    """Who asks for a change: the person (None in personal mode), whether team mode, whether an admin."""

    person: str | None = None
    team: bool = False
    admin: bool = False

    def may_change(self, server: RemoteServer) -> bool:
        return not self.team or (server.owner is None and self.admin) or server.owner == self.person


class RemoteServers:
    def __init__(
        self,
        store: RemoteStore,
        vault: Vault,
        blobs: BlobStore,
        *,
        redirect_uri: Callable[[], str],
        team: bool = False,
        taken: Callable[[], set[str]] = set,
        log_dir: Path | None = None,
        client_document: str | None = None,
    ) -> None:
        self.store, self.vault, self.blobs, self.team = store, vault, blobs, team
        self.redirect_uri, self.taken, self.log_dir = redirect_uri, taken, log_dir
        self.client_document = client_document  # https URL of this app's client ID metadata document, if any
        self.signins = SignIns()
        self.servers: list[RemoteServer] = []
        self._stamp: str | None = None  # the store's stamp the servers were read after (None: never read)
        self._connections: dict[tuple[str, str], MCPConnection] = {}
        self._starting: dict[tuple[str, str], asyncio.Lock] = {}
        self.locks: dict[tuple[str, str], asyncio.Lock] = {}  # (person, server): one refresh or sign-in at a time
        self.watch = ResourceWatch()  # resources the servers said changed (the app gives its hub's)

    async def load(self) -> None:
        self._stamp = await asyncio.to_thread(self.store.stamp)  # before the rows: a change between reads again
        self.servers = await asyncio.to_thread(self.store.servers)

    async def fresh(self) -> None:
        """Read the servers again when anyone sharing the store (another instance) changed them since they were
        read (one look at the store's stamp); a connection to a server that is gone or off now is stopped."""
        if await asyncio.to_thread(self.store.stamp) == self._stamp:
            return
        await self.load()
        for key in [k for k in self._connections if not getattr(self.named(k[0] or None, k[1]), "enabled", False)]:
            await self._connections.pop(key).stop()

    def visible(self, person: str | None) -> list[RemoteServer]:
        return [s for s in self.servers if not self.team or s.owner is None or s.owner == person]

    def connection_of(self, person: str | None, name: str) -> tuple[MCPConnection | None, bool]:
        """The person's connection to ``name`` when it is up (none is started here), and whether one is starting."""
        key = (person or "", name)
        found, starting = self._connections.get(key), self._starting.get(key)
        return (found if found is not None and found.alive else None), starting is not None and starting.locked()

    def named(self, person: str | None, name: str) -> RemoteServer | None:
        return next((s for s in self.visible(person) if s.name == name), None)

    def tools_of(self, server: RemoteServer) -> list[ToolSpec]:
        try:
            listed = json.loads(server.tools)
        except ValueError:
            return []
        return [
            ToolSpec(t["name"], t.get("description", ""), t.get("inputSchema", {}), t.get("annotations", {}))
            for t in listed
            if isinstance(t, dict) and isinstance(t.get("name"), str)
        ]

    # --- changes (the Tools panel) -------------------------------------------------------------------------------

    async def add(self, who: Changer, name: str, url: str, *, team_server: bool = False) -> RemoteServer:
        name, url = name.strip(), url.strip()
        if not NAME.match(name):
            raise RemoteRefused("A server's name is 1-40 letters, digits, '_' or '-'.")
        if not url.startswith(("http://", "https://")) or len(url) > 2000:
            raise RemoteRefused("The address must be a streamable-HTTP URL starting with http:// or https://.")
        if team_server and self.team and not who.admin:
            raise RemoteRefused("Only an admin adds a server for the whole team.")
        owner = None if (team_server or not self.team) else who.person
        await self.fresh()
        clashes = [s for s in self.servers if s.name == name and (owner is None or s.owner in (None, owner))]
        if name in self.taken() or clashes:  # a team server's name is nobody's; a person's is theirs and the team's
            raise RemoteRefused(f"A server named {name!r} is there already; choose another name.")
        server = RemoteServer(owner=owner, name=name, url=url, added_ts=_now(), added_by=who.person)
        await asyncio.to_thread(self.store.put, server)
        await self.load()
        return server

    async def enable(self, who: Changer, name: str, enabled: bool) -> None:
        await self.fresh()
        server = self._changeable(who, name)
        changed = replace(server, enabled=enabled, changed_by=who.person, changed_ts=_now())
        await asyncio.to_thread(self.store.put, changed)
        await self.load()

    async def remove(self, who: Changer, name: str) -> None:
        await self.fresh()
        server = self._changeable(who, name)
        await asyncio.to_thread(self.store.remove, server.owner, name)
        for key in [k for k in self._connections if k[1] == name and server.owner in (None, k[0] or None)]:
            await self._connections.pop(key).stop()
        await self.load()

    async def sign_out(self, person: str | None, name: str) -> None:
        """Forget this person's tokens for the server (the next call asks them to sign in)."""
        connection = self._connections.pop((person or "", name), None)
        if connection is not None:
            await connection.stop()
        await self.vault.forget(person, name)

    def _changeable(self, who: Changer, name: str) -> RemoteServer:
        server = self.named(who.person, name)
        if server is None:
            raise RemoteRefused(f"There is no server named {name!r}.")
        if not who.may_change(server):
            raise RemoteRefused("Only an admin changes a server of the whole team.")
        return server

    # --- calls -----------------------------------------------------------------------------------------------------

    async def call(
        self,
        person: str | None,
        name: str,
        tool: str,
        arguments: dict[str, Any],
        progress: Progress | None,
        ask: Ask | None,
        *,
        read_only: bool = False,
        timeout: float = 300.0,
    ) -> CallOutcome:
        call = CallAuth(ask=ask, read_only=read_only)
        context = CURRENT.set(call)
        try:
            connection = await self._connection(person, name, call, timeout)
            outcome = await connection.call(tool, arguments, progress, ask)
        except SignInEnded:
            raise
        except ToolServerError as exc:
            raise _why(name, call) or exc from None
        finally:
            CURRENT.reset(context)
        if call.ended is not None:
            raise call.ended
        return outcome

    async def connect(self, person: str | None, name: str, ask: Ask | None) -> tuple[ToolSpec, ...]:
        """Reach the server for ``person`` (signing in through ``ask`` if it must); the tools it lists now."""
        call = CallAuth(ask=ask, read_only=True)
        context = CURRENT.set(call)
        try:
            connection = await self._connection(person, name, call, 300.0)
        except SignInEnded:
            raise
        except ToolServerError as exc:
            raise _why(name, call) or exc from None
        finally:
            CURRENT.reset(context)
        return connection.tools

    async def stop(self) -> None:
        connections, self._connections = list(self._connections.values()), {}
        await self.watch.close()
        await asyncio.gather(*(c.stop() for c in connections), return_exceptions=True)

    async def _connection(self, person: str | None, name: str, call: CallAuth, timeout: float) -> MCPConnection:
        key = (person or "", name)
        async with self._starting.setdefault(key, asyncio.Lock()):
            connection = self._connections.get(key)
            if connection is not None and connection.alive:
                return connection
            server = self.named(person, name)
            if server is None or not server.enabled:
                raise ServerUnavailable(f"the tool server {name!r} is not enabled")
            connection = MCPConnection(
                ServerConfig(name=name, url=server.url, timeout=timeout), self.log_dir, self.blobs
            )
            storage = VaultStorage(self.vault, person, name)
            lock = self.locks.setdefault(key, asyncio.Lock())
            redirect, document = self.redirect_uri(), self.client_document
            auth = SignInAuth(
                server.url,
                name,
                storage,
                self.signins,
                redirect,
                connection.elicitations,
                lock,
                client_document=document,
            )
            connection.auth = auth
            connection.updated = lambda uri: self.watch.mark(keyed(name, person), uri)
            call.deadline = Deadline(START_SECONDS)  # paused while the person signs in
            try:
                await call.deadline.run(connection.start(timeout=DAY))
            except (TimedOut, ToolServerError) as exc:
                await connection.stop()
                if isinstance(exc, TimedOut):
                    raise ServerUnavailable(f"{name} did not answer within {START_SECONDS:g} s") from None
                raise
            finally:
                call.deadline = None
            self._connections[key] = connection
            self.watch.spawn(self.watch.resume(keyed(name, person), connection.session))
            await self._remember(server, connection.tools)
            return connection

    async def _remember(self, server: RemoteServer, tools: tuple[ToolSpec, ...]) -> None:
        listed = json.dumps(
            [{"name": t.name, "description": t.description, "inputSchema": t.schema, "annotations": t.annotations}
             for t in tools],
            sort_keys=True,
        )  # fmt: skip
        if listed != server.tools:
            await asyncio.to_thread(self.store.put, server.with_tools(listed))
            await self.load()


def _why(name: str, call: CallAuth) -> SignInEnded | None:
    if call.ended is not None:
        return call.ended
    if call.step:
        return unreachable(name, call.step)
    return None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
