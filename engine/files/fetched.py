"""What a tool server gave for a "/" prompt or an "@" resource, stored by sha256 as attachments of a message.

Guarantees:
- ``from_prompt(files, server, name, got)`` stores the prompt's messages as one Markdown text file
  (``<server>-<name>.md``, ``origin="prompt"``) and each image, audio or embedded resource among them as a file of
  its own, each through ``Files.accept`` (sniffed from the bytes, limited, images re-encoded without metadata) and
  recorded with its ``origin``, ``server`` and ``ref`` (the prompt's name): the text goes to the model as the
  message's own words (``engine.files.content``), the same bytes on every Retry, edit and Branch.
- ``from_resource(files, server, uri, pieces, replaces)`` stores each content of a resource the same way
  (``origin="resource"``, ``ref`` its URI, ``replaces`` the sha256 a Refresh re-fetched): text as a text file the
  model reads, an image as an image (a model that takes images gets an image part), other bytes as a file that
  is never pasted as text.
- Both raise only ``InputRejected`` with a sentence (a piece over the file limit, an empty one).
"""

from __future__ import annotations

import re
from dataclasses import replace

from engine.files.service import Files
from engine.tools import Piece, PromptMessages
from ledger.events import Attachment, Origin

SUFFIXES = {"text/markdown": ".md", "application/json": ".json", "text/csv": ".csv", "text/plain": ".txt"}


async def from_prompt(files: Files, server: str, name: str, got: PromptMessages) -> tuple[Attachment, ...]:
    text = Piece(f"{server}-{name}.md", got.text.encode("utf-8"), "text/markdown", True)
    return await _stored(files, (text, *got.pieces), "prompt", server, name, None)


async def from_resource(
    files: Files, server: str, uri: str, pieces: tuple[Piece, ...], replaces: str | None = None
) -> tuple[Attachment, ...]:
    return await _stored(files, pieces, "resource", server, uri, replaces)


async def _stored(
    files: Files, pieces: tuple[Piece, ...], origin: Origin, server: str, ref: str, replaces: str | None
) -> tuple[Attachment, ...]:
    out: list[Attachment] = []
    for piece in pieces:
        accepted = await files.accept(_name(piece), piece.data)
        out.append(replace(accepted, origin=origin, server=server, ref=ref, replaces=replaces))
    return tuple(out)


def _name(piece: Piece) -> str:
    """The piece's name, with the suffix its text type is known by (``engine.files.sniff`` reads text types so)."""
    name = re.sub(r"[{}?#*]", "_", piece.name) or "resource"
    suffix = SUFFIXES.get((piece.media_type or "").split(";")[0].strip().lower())
    if piece.text and suffix and not name.lower().endswith(suffix):
        name += suffix
    return name
