"""An MCP tool result (``CallToolResult``) as the ledger keeps it: every content part whole, binary bytes as blobs.

Guarantees:
- Every MCP content type becomes a ``ledger.events.values.ToolPart``, in the server's order: ``text``; ``image`` and
  ``audio`` (base64 decoded, the bytes put in the blob store, ``sha256`` and ``size`` kept); an embedded
  ``resource`` (its text, or its blob's bytes in the blob store, with its URI and media type); a ``resource_link``
  (URI, name, media type: never fetched). ``structuredContent`` is kept as JSON text (``structured``).
- An image's width and height are read with Pillow from the bytes; bytes that are not the raster image type the
  server claims (PNG, JPEG, GIF, WebP), or that Pillow cannot read (SVG, garbage), are kept as a binary
  ``resource`` part (``application/octet-stream``) with a note, never as an image.
- ``text`` (what ``ToolResult.content`` records and the model reads) is the text parts, and for each other part a
  short description in its place: ``[image, 512×512 PNG, 12 KB, shown to the user]``, ``[resource file:///x.txt,
  text/plain: <its text>]``, ``[link: <uri> (<name>)]``. A result with structured content and no text part
  carries the JSON as its text, so the model sees it. A result that is one text part is its ``text`` alone (no
  parts: the same text is not kept twice).
- A result over ``ledger.bounds.TEXT_BOUND`` comes back as its preview with ``whole``, the blob of its whole text
  (``engine.tools.result_bound``); its structured content, when it is only its text wrapped (``{"result": text}``,
  as SDK servers send a returned string), is not kept at all (the text holds it).
- With ``retouch`` (the hub's: ``engine.files.images.retouch``), an image is kept re-encoded without metadata, as
  an attachment is, so the card and the model get the same clean bytes; a PNG whose only fault is a damaged
  ancillary chunk (a bad CRC) is an image then, shown and sent without that chunk.
- Bytes that cannot be kept (over ``MAX_PART_BYTES``, not base64, a blob store that refuses them) leave a part
  without ``sha256`` and a description saying why; nothing raises from ``convert`` but cancellation.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.tools.result_bound import bound
from ledger.bounds import is_over
from ledger.events import TextRef, ToolPart
from store.blobs import BlobStore

MAX_PART_BYTES = 20 * 1024 * 1024
#: Pillow's format name -> the media type a server may claim for it.
RASTER = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: Re-encodes an image's bytes (raw bytes, its media type) -> (bytes, width, height), or None when it cannot.
Retouch = Callable[[bytes, str], tuple[bytes, int, int] | None]
ALIASES = {"image/jpg": "image/jpeg", "image/pjpeg": "image/jpeg", "image/x-png": "image/png"}


@dataclass(frozen=True, slots=True)
class Converted:
    text: str
    parts: tuple[ToolPart, ...]
    structured: str | None
    whole: TextRef | None = None  # the whole text's blob, when ``text`` is its preview


async def convert(result: Any, blobs: BlobStore, retouch: Retouch | None = None) -> Converted:
    """The whole of one ``CallToolResult`` (see the module's guarantees)."""
    parts: list[ToolPart] = []
    words: list[str] = []
    for item in getattr(result, "content", None) or []:
        part, said = await _part(item, blobs, retouch)
        parts.append(part)
        words.append(said)
    raw = getattr(result, "structured_content", None)
    wrapped = isinstance(raw, dict) and list(raw) == ["result"] and any(p.text == raw["result"] for p in parts)
    long = wrapped and isinstance(raw, dict) and is_over(raw["result"])  # the text again, wrapped: not kept twice
    structured = None if long else _structured(raw)
    if structured is not None and not any(p.kind == "text" for p in parts):
        words.insert(0, structured)
    if len(parts) == 1 and parts[0].kind == "text":
        parts = []  # the text is the content, exactly: not kept twice
    text, kept, structured, whole = await bound("\n".join(words), tuple(parts), structured, blobs)
    return Converted(text=text, parts=kept, structured=structured, whole=whole)


def describe(part: ToolPart) -> str:
    """The words that stand for a part in the result's text (a text part is its text)."""
    match part.kind:
        case "text":
            return part.text or ""
        case "image":
            kind = (part.media_type or "image").removeprefix("image/").upper()
            return f"[image, {part.width}×{part.height} {kind}, {kilobytes(part.size)}, shown to the user]"
        case "audio":
            return f"[audio, {part.media_type or 'unknown type'}, {kilobytes(part.size)}, playable by the user]"
        case "resource":
            where = f"resource {part.uri}" if part.uri else "resource"
            if part.text is not None:
                return f"[{where}, {part.media_type or 'text/plain'}: {part.text}]"
            note = f", {part.name}" if part.name else ""
            return f"[{where}, {part.media_type or 'binary'}, {kilobytes(part.size)}{note}, a file for the user]"
        case "resource_link":
            named = f" ({part.name})" if part.name else ""
            return f"[link: {part.uri}{named}]"


def kilobytes(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{round(size / 1024)} KB"
    return f"{size / (1024 * 1024):.1f} MB"


async def _part(item: Any, blobs: BlobStore, retouch: Retouch | None) -> tuple[ToolPart, str]:
    kind = getattr(item, "type", None)
    if kind == "text":
        part = ToolPart(kind="text", text=str(getattr(item, "text", "")))
        return part, describe(part)
    if kind in ("image", "audio"):
        claimed = str(getattr(item, "mime_type", "") or "")
        return await _binary(kind, getattr(item, "data", ""), claimed, blobs, retouch)
    if kind == "resource":
        return await _resource(getattr(item, "resource", None), blobs)
    if kind == "resource_link":
        name = getattr(item, "title", None) or getattr(item, "name", None)
        part = ToolPart(kind="resource_link", uri=str(item.uri), name=name, media_type=getattr(item, "mime_type", None))
        return part, describe(part)
    part = ToolPart(kind="text", text=f"[{kind or 'unknown'} content, not understood by this client]")
    return part, part.text or ""


async def _binary(
    kind: str, data: str, claimed: str, blobs: BlobStore, retouch: Retouch | None = None
) -> tuple[ToolPart, str]:
    raw, problem = _decode(data)
    if raw is None:
        part = ToolPart(kind=kind, media_type=claimed or None)  # type: ignore[arg-type]
        return part, f"[{kind}, {claimed or 'unknown type'}, not kept: {problem}]"
    size = len(raw)
    if kind == "image":
        sniffed = await asyncio.to_thread(_raster, raw)  # Pillow reads headers of up to MAX_PART_BYTES: off the loop
        expected = ALIASES.get(claimed.lower(), claimed.lower())
        png = expected == "image/png" and raw.startswith(PNG_SIGNATURE)  # perhaps only a damaged ancillary chunk
        if retouch is not None and ((sniffed is None and png) or (sniffed is not None and sniffed[0] == expected)):
            fixed = await asyncio.to_thread(retouch, raw, expected)
            if fixed is not None:
                raw, sniffed = fixed[0], (expected, fixed[1], fixed[2])
                size = len(raw)
        if sniffed is None or sniffed[0] != expected:
            sha, problem = await _put(raw, "application/octet-stream", blobs)
            what = f"not a readable {claimed or 'image'}" if sniffed is None else f"{sniffed[0]} claimed as {claimed}"
            note = f"an image the server sent that is {what}"
            part = ToolPart(kind="resource", sha256=sha, size=size, name=note, media_type="application/octet-stream")
            kept = "kept as a file, not shown" if sha else f"not kept: {problem}"
            return part, f"[{note}, {kilobytes(size)}, {kept}]"
        sha, problem = await _put(raw, expected, blobs)
        part = ToolPart(kind="image", sha256=sha, size=size, media_type=expected, width=sniffed[1], height=sniffed[2])
    else:
        sha, problem = await _put(raw, claimed or "application/octet-stream", blobs)
        part = ToolPart(kind="audio", sha256=sha, size=size, media_type=claimed or None)
    if sha is None:
        return part, f"[{kind}, {claimed or 'unknown type'}, {kilobytes(size)}, not kept: {problem}]"
    return part, describe(part)


async def _resource(resource: Any, blobs: BlobStore) -> tuple[ToolPart, str]:
    uri = str(getattr(resource, "uri", "") or "") or None
    media_type = getattr(resource, "mime_type", None)
    text = getattr(resource, "text", None)
    if isinstance(text, str):
        part = ToolPart(kind="resource", uri=uri, text=text, media_type=media_type)
        return part, describe(part)
    raw, problem = _decode(getattr(resource, "blob", ""))
    sha = None
    if raw is not None:
        sha, problem = await _put(raw, media_type or "application/octet-stream", blobs)
    part = ToolPart(kind="resource", uri=uri, sha256=sha, size=len(raw or b""), media_type=media_type)
    if sha is None:
        return part, f"[resource {uri}, {media_type or 'binary'}, not kept: {problem}]"
    return part, describe(part)


def _decode(data: Any) -> tuple[bytes | None, str]:
    if not isinstance(data, str):
        return None, "no data"
    if len(data) > MAX_PART_BYTES * 4 // 3 + 4:
        return None, f"over {kilobytes(MAX_PART_BYTES)}"
    try:
        return base64.b64decode(data, validate=True), ""
    except (binascii.Error, ValueError):
        return None, "the data is not base64"


def _raster(raw: bytes) -> tuple[str, int, int] | None:
    """The media type and size of a raster image Pillow reads from these bytes, or None."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(raw)) as image:
            image.verify()  # a truncated or forged body fails here, before anything shows it
            media_type = RASTER.get(image.format or "")
            return (media_type, image.width, image.height) if media_type else None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, Image.DecompressionBombError):
        return None


async def _put(raw: bytes, media_type: str, blobs: BlobStore) -> tuple[str | None, str]:
    try:
        return await asyncio.to_thread(blobs.put, raw, media_type), ""
    except Exception as exc:  # noqa: BLE001 - a store that refuses the bytes leaves a described part
        return None, str(exc) or type(exc).__name__


def _structured(value: Any) -> str | None:
    if value is None:
        return None
    try:
        return json.dumps(value, ensure_ascii=False, indent=None, default=str)
    except (TypeError, ValueError):
        return json.dumps(str(value))
