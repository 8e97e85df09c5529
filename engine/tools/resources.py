"""MCP resources of the hub's servers (``resources/list``, ``resources/templates/list``, ``resources/read``), and
what a prompt or a resource gives, as pieces to be stored by sha256 (``engine.files.fetched`` does).

Guarantees:
- ``resources(hub)`` lists every running server's resources and resource templates (all pages), the app's servers
  first, then a conversation's own (``ChatHub``); a server that does not offer resources, or fails to list them,
  is left out (logged), never an error for the others.
- ``read(hub, server, uri)`` returns the resource's contents as ``Piece``s in the server's order: text as its UTF-8
  bytes with ``text=True``, a blob's bytes decoded from base64 (never pasted as text); it raises only
  ``FetchFailed`` with a sentence (the server is not running, it answered with an error, it took longer than
  ``FETCH_SECONDS``, it sent nothing).
- ``pieces_of(contents)`` is that conversion, for the embedded resources a prompt returns too.
- ``changed`` holds ``(server, uri)`` of every resource a ``notifications/resources/updated`` named since the app
  started (``note_updated``, for the connection's message handler); ``subscribe`` asks a server on a revision
  before 2026-07-28 that offers subscriptions to send them for ``uri`` (quietly nothing otherwise: from 2026-07-28
  ``resources/subscribe`` is removed and the capability means ``subscriptions/listen``). Neither is wired yet: a
  changed resource is seen by its Refresh (``ui.resource_refresh``).
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

log = logging.getLogger("ledger_chat.tools")
FETCH_SECONDS = 30.0
T = TypeVar("T")
changed: set[tuple[str, str]] = set()  # (server, uri) a server said changed (``notifications/resources/updated``)


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
    """Each running server's name and SDK session: the app's (a ``ChatHub``'s base) first, then the hub's own."""
    base = getattr(hub, "base", None)
    for owner in (base, hub) if base is not None else (hub,):
        for health in owner.health():
            session = owner.session(health.name) if health.state == "ready" else None
            if session is not None:
                yield health.name, session


def session_of(hub: Any, server: str) -> Any:
    found = dict(sessions(hub)).get(server)
    if found is None:
        raise FetchFailed(f"The tool server {server!r} is not running.")
    return found


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


async def subscribe(hub: Any, server: str, uri: str) -> bool:
    """Ask ``server`` to say when ``uri`` changes (when it offers subscriptions); whether it was asked."""
    try:
        session = session_of(hub, server)
        capabilities = session.server_capabilities
        if not (capabilities and capabilities.resources and capabilities.resources.subscribe):
            return False
        if (session.protocol_version or "") >= "2026-07-28":  # there ``subscribe`` means ``subscriptions/listen``
            return False  # (``resources/subscribe`` is removed): not asked, never an error
        await asked(server, session.subscribe_resource(uri), f"a subscription to {uri}")
    except FetchFailed as exc:
        log.info("no subscription to %s on %s: %s", uri, server, exc)
        return False
    return True


def note_updated(server: str, uri: str) -> None:
    """A server said ``uri`` changed: an attachment of it is marked changed (the sent message is not)."""
    changed.add((server, uri))
