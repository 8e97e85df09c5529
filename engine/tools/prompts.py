"""MCP prompts of the hub's servers as "/" commands: listed (``prompts/list``), fetched (``prompts/get``), their
arguments completed (``completion/complete``, for template arguments of resources too).

Guarantees:
- ``prompts(hub)`` lists every running server's prompts (all pages) with their arguments, the app's servers first,
  the remote servers of the hub's person whose connection is up last (``engine.tools.resources.owned``);
  a server that offers none, or fails to list them, is left out (logged), never an error for the others.
- ``get(hub, server, name, arguments)`` returns the prompt's messages as one text (the user's messages' texts
  alone, blank lines between; when an assistant's message is among them, each is headed with its role) and the
  images, audio and embedded resources among them as ``Piece``s (``engine.tools.resources``), never pasted as
  text; a resource link is a line naming it (never fetched by itself). It raises only ``FetchFailed`` with a sentence.
- ``complete(hub, server, ref, argument, value, context)`` returns the server's suggestions (at most 100) for one
  argument of a prompt (``ref`` ``("prompt", name)``) or a resource template (``("template", uri_template)``);
  empty when the server offers no completions or fails (a form still takes what is typed).
"""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from engine.tools.resources import FetchFailed, Piece, asked, offers, pages, pieces_of, session_of, sessions

log = logging.getLogger("ledger_chat.tools")
MAX_SUGGESTIONS = 100


@dataclass(frozen=True, slots=True)
class PromptArgument:
    name: str
    description: str
    required: bool


@dataclass(frozen=True, slots=True)
class PromptInfo:
    server: str
    name: str
    title: str
    description: str
    arguments: tuple[PromptArgument, ...] = ()


@dataclass(frozen=True, slots=True)
class PromptMessages:
    """What ``prompts/get`` gave: its messages as one text, and the binary or embedded parts among them."""

    text: str
    pieces: tuple[Piece, ...] = ()


async def prompts(hub: Any) -> tuple[PromptInfo, ...]:
    found: list[PromptInfo] = []
    for server, session in list(sessions(hub)):
        if not offers(session, "prompts"):
            continue
        try:
            listed = await asked(server, pages(session.list_prompts, "prompts"), "its prompts")
        except FetchFailed as exc:
            log.warning("could not list the prompts of %s: %s", server, exc)
            continue
        for p in listed:
            arguments = tuple(
                PromptArgument(a.name, a.description or "", bool(a.required)) for a in (p.arguments or ())
            )
            found.append(PromptInfo(server, p.name, p.title or p.name, p.description or "", arguments))
    return tuple(found)


async def get(hub: Any, server: str, name: str, arguments: Mapping[str, str]) -> PromptMessages:
    session = session_of(hub, server)
    given = {k: v for k, v in arguments.items() if v != ""}
    result = await asked(server, session.get_prompt(name, given or None), f"the prompt {name}")
    messages = list(getattr(result, "messages", None) or [])
    if not messages:
        raise FetchFailed(f"{server} sent no messages for the prompt {name}.")
    headed = any(m.role != "user" for m in messages)
    texts: list[str] = []
    pieces: list[Piece] = []
    for message in messages:
        said = _content(message.content, pieces, f"{name}-{len(pieces) + 1}")
        if said:
            texts.append(f"**{message.role}:** {said}" if headed else said)
    return PromptMessages("\n\n".join(t for t in texts if t), tuple(pieces))


def _content(content: Any, pieces: list[Piece], name: str) -> str:
    """A message's content as text; a binary or embedded part goes to ``pieces`` (its place named in the text)."""
    kind = getattr(content, "type", None)
    if kind == "text":
        return str(content.text)
    if kind in ("image", "audio"):
        try:
            raw = base64.b64decode(str(content.data), validate=True)
        except (binascii.Error, ValueError):
            return f"[{kind} that was not base64, left out]"
        pieces.append(Piece(name, raw, content.mime_type, False))
        return ""
    if kind == "resource":
        found = pieces_of([content.resource])
        pieces.extend(found)
        return ""
    if kind == "resource_link":
        return f"[link: {content.uri} ({content.name})]"
    return f"[{kind or 'unknown'} content, not understood by this client]"


async def complete(
    hub: Any,
    server: str,
    ref: tuple[Literal["prompt", "template"], str],
    argument: str,
    value: str,
    context: Mapping[str, str] | None = None,
) -> tuple[str, ...]:
    from mcp.types import PromptReference, ResourceTemplateReference

    try:
        session = session_of(hub, server)
        if not offers(session, "completions"):
            return ()
        target = PromptReference(name=ref[1]) if ref[0] == "prompt" else ResourceTemplateReference(uri=ref[1])
        done = {k: v for k, v in (context or {}).items() if v and k != argument}
        result = await asked(
            server, session.complete(target, {"name": argument, "value": value}, done or None), "suggestions"
        )
    except FetchFailed as exc:
        log.info("no suggestions for %s from %s: %s", argument, server, exc)
        return ()
    return tuple(str(v) for v in result.completion.values[:MAX_SUGGESTIONS])
