"""MCP resources of the hub's servers (``resources/list``, ``resources/templates/list``, ``resources/read``), and
what a prompt or a resource gives, as pieces to be stored by sha256 (``engine.files.fetched`` does).

Guarantees:
- ``resources(hub)`` lists every running server's resources and resource templates (all pages), the app's servers
  first, then a conversation's own (``ChatHub``), then the remote servers the hub's person uses whose connection
  is up (``engine.tools.remote_context``: that person's own connection, never another's); a server that does not
  offer resources, or fails to list them, is left out (logged), never an error for the others.
- ``read(hub, server, uri)`` returns the resource's contents as ``Piece``s in the server's order: text as its UTF-8
  bytes with ``text=True``, a blob's bytes decoded from base64 (never pasted as text); it raises only
  ``FetchFailed`` with a sentence (the server is not running, it answered with an error, it took longer than
  ``FETCH_SECONDS``, it sent nothing; a remote server that is not connected too). A read that succeeds tells the
  ``watch`` its server's changes are kept in (the app's hub's, or a conversation's, ``engine.tools.resource_watch``;
  a remote server's under the person's own name, ``remote_context``) that the app holds ``uri``'s current bytes,
  and asks the server in the background to say when it changes (``resources/subscribe`` or
  ``subscriptions/listen``, whichever its revision has; nothing when it offers neither). An "@" attach and a
  Refresh both read so.
- ``pieces_of(contents)`` is that conversion, for the embedded resources a prompt returns too.
- ``watch_of(hub)`` is the record of changed resources an open page listens to (the app's hub's ``watch``);
  ``watch(hub, server, uri)`` asks ``server`` about ``uri`` there (for the resources of a chat's sent messages
  when its page opens).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from engine.tools.mcp_server import ToolServerError
from engine.tools.remote_context import Source, chain, live
from engine.tools.resource_watch import ResourceWatch

log = logging.getLogger("ledger_chat.tools")
FETCH_SECONDS = 30.0
T = TypeVar("T")


class FetchFailed(ToolServerError):
    """A prompt, a resource or a completion could not be had; the message says why in a sentence."""


@dataclass(frozen=True, slots=True)
class Piece:
    """One thing fetched from a server: its bytes (text as UTF-8), a name, the media type the server gave."""

    name: str
    data: bytes
    media_type: str | None
    text: bool
    uri: str | None = None


@dataclass(frozen=True, slots=True)
class ResourceInfo:
    """A resource (``uri``) or a resource template (``template``: an RFC 6570 URI template) of a server."""

    server: str
    name: str
    title: str
    description: str
    uri: str = ""
    template: str = ""
    media_type: str | None = None
    size: int | None = None


def sessions(hub: Any) -> Iterator[tuple[str, Any]]:
    """Each running server's name and SDK session (``owned``' order)."""
    for source in owned(hub):
        yield source.name, source.session


def owned(hub: Any) -> Iterator[Source]:
    """Each running server the hub reaches: the app's first, then a conversation's own (``ChatHub``), then the
    remote servers of the hub's person whose connection is up (``engine.tools.remote_context``)."""
    for owner in chain(hub):
        for health in owner.health():
            session = owner.session(health.name) if health.state == "ready" else None
            if session is not None:
                yield Source(health.name, session, owner.watch, health.name)
    yield from live(hub)


def session_of(hub: Any, server: str) -> Any:
    found = dict(sessions(hub)).get(server)
    if found is None:
        raise FetchFailed(f"The tool server {server!r} is not running (a remote one: not connected).")
    return found


def watch_of(hub: Any) -> ResourceWatch | None:
    """The app's record of changed resources (a conversation's hub: its base's), None without tool servers."""
    found = getattr(chain(hub)[0], "watch", None)
    return found if isinstance(found, ResourceWatch) else None


def watch(hub: Any, server: str, uri: str) -> None:
    """Ask ``server`` (in the background) to say when ``uri`` changes; nothing when it is not running."""
    for source in owned(hub):
        if source.name == server:
            source.watch.spawn(source.watch.watch(source.key, source.session, uri))
            return


def offers(session: Any, what: str) -> bool:
    """Whether the server's capabilities name ``what`` (``prompts``, ``resources``, ``completions``)."""
    capabilities = getattr(session, "server_capabilities", None)
    return capabilities is not None and getattr(capabilities, what, None) is not None


async def asked(server: str, call: Awaitable[T], what: str) -> T:
    """``call`` awaited within ``FETCH_SECONDS``; an error becomes ``FetchFailed`` naming the server and ``what``."""
    from mcp import MCPError

    try:
        return await asyncio.wait_for(call, FETCH_SECONDS)
    except TimeoutError:
        raise FetchFailed(f"{server} did not send {what} within {FETCH_SECONDS:g} s.") from None
    except MCPError as exc:
        raise FetchFailed(f"{server} could not give {what}: {exc.message}") from None


async def pages(list_page: Callable[..., Awaitable[Any]], field: str) -> list[Any]:
    """Every item of a paginated MCP list (``nextCursor``), at most 50 pages."""
    from mcp.types import PaginatedRequestParams

    items: list[Any] = []
    cursor = None
    for _ in range(50):
        result = await list_page(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        items.extend(getattr(result, field, None) or [])
        cursor = getattr(result, "next_cursor", None)
        if not cursor:
            break
    return items


async def resources(hub: Any) -> tuple[ResourceInfo, ...]:
    found: list[ResourceInfo] = []
    for server, session in list(sessions(hub)):
        if not offers(session, "resources"):
            continue
        try:
            listed = await asked(server, pages(session.list_resources, "resources"), "its resources")
            templates = await asked(
                server, pages(session.list_resource_templates, "resource_templates"), "its resource templates"
            )
        except FetchFailed as exc:
            log.warning("could not list the resources of %s: %s", server, exc)
            continue
        for r in listed:
            title = r.title or r.name
            found.append(ResourceInfo(server, r.name, title, r.description or "", str(r.uri), "", r.mime_type, r.size))
        for t in templates:
            title = t.title or t.name
            found.append(ResourceInfo(server, t.name, title, t.description or "", "", t.uri_template, t.mime_type))
    return tuple(found)


async def read(hub: Any, server: str, uri: str) -> tuple[Piece, ...]:
    session = session_of(hub, server)
    result = await asked(server, session.read_resource(uri), f"the resource {uri}")
    pieces = pieces_of(getattr(result, "contents", None) or [])
    if not pieces:
        raise FetchFailed(f"{server} sent nothing for the resource {uri}.")
    for source in owned(hub):
        if source.name == server:
            source.watch.fetched(source.key, uri)  # the app holds its current bytes now
    watch(hub, server, uri)
    return pieces


def pieces_of(contents: list[Any]) -> tuple[Piece, ...]:
    out: list[Piece] = []
    for item in contents:
        uri = str(getattr(item, "uri", "") or "")
        name = uri.rstrip("/").rpartition("/")[2] or uri or "resource"
        media_type = getattr(item, "mime_type", None)
        text = getattr(item, "text", None)
        if isinstance(text, str):
            out.append(Piece(name, text.encode("utf-8"), media_type, True, uri))
            continue
        try:
            raw = base64.b64decode(str(getattr(item, "blob", "") or ""), validate=True)
        except (binascii.Error, ValueError):
            log.warning("a resource's blob (%s) is not base64; left out", uri)
            continue
        out.append(Piece(name, raw, media_type, False, uri))
    return tuple(out)
