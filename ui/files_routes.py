"""The file routes: ``GET /files/{sha256}``, ``GET /files/{sha256}/thumb`` and ``POST /files`` (multipart).

Guarantees (all behind ``ui.guard`` like the pages: Host, Origin, the token or, in team mode, the sign-in):
- Team mode: a file is served (and its thumbnail) only to the person who sent it or one of whose conversations
  names its hash; to anyone else it is 404, as an unknown hash (``may_read``).
- ``GET /files/{sha}`` serves the bytes inline only when they are a raster image (PNG, JPEG, GIF, WebP) or audio, by
  their own signature (``inline_type``: ``engine.files.sniff.signature``, the app's one table of magic bytes), never
  by a name or a stored claim; everything else (SVG, HTML, PDF, text, unknown)
  goes as ``application/octet-stream`` with ``Content-Disposition: attachment`` under the name the ledger holds for it
  (``names``: ``ui.download_names``), or the one ``POST /files`` recorded, else ``file-<sha prefix>``, cleaned
  (``disposition``); a query (``?name=``) chooses nothing. Every file response carries ``X-Content-Type-Options:
  nosniff`` and a CSP of its own that runs nothing (``FILE_CSP``: no script, sandboxed). An unknown or malformed hash is
  404.
- ``GET /files/queue``: ``{"waiting": n}``, how many images wait to be decoded (``engine.files.decoding.GATE``:
  two at a time); the page's chip of an image sent says so while it waits.
- ``GET /files/{sha}/thumb``: the thumbnail (PNG or JPEG), 404 for an unknown hash or a file that has none.
- ``POST /files``: refused before reading when the body is larger than a message may carry (413), then, before
  anything is stored, per file: over the per-file limit or too many files (413), named like an image but not one
  (415); then a file ``Files.accept`` refuses (415); each answer is JSON, ``{"error": sentence}`` for a refusal
  (the sentence names the limit), else ``[{"sha256","name","media_type","size","width","height"}]``. Accepted
  files are remembered (``ui.attachments.remember``) so a page's tray can add them.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from urllib.parse import quote

from nicegui import app
from starlette.datastructures import UploadFile
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import Message

from engine.files import AUDIO, GATE, RASTER, clean_name, signature
from ledger.decide import InputRejected
from ledger.events import Attachment
from ui.attachments import FilesService, accepted_name, over_count_limit, over_file_limit, remember, size_words

SHA = re.compile(r"[0-9a-f]{64}")
FILE_CSP = "default-src 'none'; img-src 'self'; media-src 'self'; style-src 'unsafe-inline'; sandbox"
OVERHEAD = 64 * 1024  # multipart boundaries and headers on top of the files themselves
IMAGE_NAMES = (".png", ".jpg", ".jpeg", ".gif", ".webp")
INLINE = RASTER | AUDIO  # served inline, by the bytes' own signature; everything else as a download


def inline_type(data: bytes) -> str | None:
    """The media type to serve inline, read from the bytes' signature (``engine.files.sniff``); None for the rest."""
    media_type = signature(data)
    return media_type if media_type in INLINE else None


def disposition(name: str | None, sha256: str) -> str:
    """``attachment; filename="…"; filename*=UTF-8''…``: an ASCII fallback without quotes or separators."""
    cleaned = clean_name(name) if name else f"file-{sha256[:12]}"
    ascii_name = "".join(c if c.isascii() and c.isalnum() or c in " .-_()" else "_" for c in cleaned).strip() or "file"
    return f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(cleaned, safe='')}"


def refusal(status: int, sentence: str) -> JSONResponse:
    return JSONResponse({"error": sentence}, status_code=status)


def register_file_routes(
    service: Callable[[], FilesService | None],
    names: Callable[[str], str | None] = lambda _: None,
    may_read: Callable[[str, Request], Awaitable[bool]] | None = None,
) -> None:
    """Add the three routes; ``service()`` returns the running engine's ``FilesService`` (None: not started),
    ``names(sha)`` the name the ledger holds for a file (None: none known), ``may_read(sha, request)`` whether
    the request's person may have it (team mode; otherwise it is answered as an unknown hash)."""

    @app.get("/files/queue")  # before /files/{sha256}, which would take "queue" for a hash
    async def decode_queue() -> Response:
        return JSONResponse({"waiting": GATE.waiting}, headers={"cache-control": "no-store"})

    @app.get("/files/{sha256}")
    async def get_file(sha256: str, request: Request) -> Response:
        files = service()
        if files is None or not SHA.fullmatch(sha256) or (may_read is not None and not await may_read(sha256, request)):
            return PlainTextResponse("No such file.", status_code=404)
        data = await asyncio.to_thread(files.read, sha256)
        if data is None:
            return PlainTextResponse("No such file.", status_code=404)
        inline = inline_type(data)
        headers = {
            "x-content-type-options": "nosniff",
            "content-security-policy": FILE_CSP,
            "cache-control": "private, max-age=31536000, immutable",
        }
        if inline is None:
            headers["content-disposition"] = disposition(names(sha256) or accepted_name(sha256), sha256)
        return Response(data, media_type=inline or "application/octet-stream", headers=headers)

    @app.get("/files/{sha256}/thumb")
    async def get_thumb(sha256: str, request: Request) -> Response:
        files = service()
        if files is None or not SHA.fullmatch(sha256) or (may_read is not None and not await may_read(sha256, request)):
            return PlainTextResponse("No such file.", status_code=404)
        data = await asyncio.to_thread(files.thumbnail, sha256)
        media_type = inline_type(data) if data is not None else None
        if data is None or media_type not in ("image/png", "image/jpeg"):
            return PlainTextResponse("No thumbnail for that file.", status_code=404)
        headers = {
            "x-content-type-options": "nosniff",
            "content-security-policy": FILE_CSP,
            "cache-control": "private, max-age=31536000, immutable",
        }
        return Response(data, media_type=media_type, headers=headers)

    @app.post("/files")
    async def post_files(request: Request) -> Response:
        files = service()
        if files is None:
            return refusal(400, "This server does not take files.")
        return await upload(request, files)


async def upload(request: Request, files: FilesService) -> Response:
    limits = files.limits
    cap = limits.max_message_bytes + OVERHEAD
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > cap:
        return refusal(
            413,
            f"These files are {size_words(int(declared))}; the limit is "
            f"{size_words(limits.max_message_bytes)} per message.",
        )
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        return refusal(400, "Send files as multipart/form-data.")
    body = bytearray()
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > cap:
                return refusal(
                    413, f"These files are over the limit of {size_words(limits.max_message_bytes)} per message."
                )
    except ClientDisconnect:
        return refusal(400, "The upload was cut off.")
    parts = await _form(request, bytes(body), limits.max_files)
    if isinstance(parts, Response):
        return parts
    try:
        return await _accept_all(parts, files)
    finally:
        for part in parts:
            await part.close()


async def _accept_all(parts: list[UploadFile], files: FilesService) -> Response:
    """Check every file first (nothing is stored when one is refused), then accept them in order."""
    named: list[tuple[str, bytes]] = []
    for part in parts:
        name = clean_name(part.filename or "") or "file"
        data = await part.read()
        if len(data) > files.limits.max_file_bytes:
            return refusal(413, over_file_limit(name, len(data), files.limits))
        if name.lower().endswith(IMAGE_NAMES) and signature(data) not in RASTER:
            return refusal(
                415,
                f"{name} is named like an image, but its content is not a PNG, JPEG, GIF or WebP image. It was not "
                "attached.",
            )
        named.append((name, data))
    made: list[Attachment] = []
    for name, data in named:
        try:
            made.append(await files.accept(name, data))
        except InputRejected as exc:
            return refusal(415, str(exc))
    for attachment in made:
        remember(attachment)
    return JSONResponse([asdict(a) for a in made])


async def _form(request: Request, body: bytes, max_files: int) -> list[UploadFile] | Response:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    again = Request(request.scope, replay)
    try:
        form = await again.form(max_files=1000, max_fields=20)  # the body's size is capped already
    except Exception as exc:  # noqa: BLE001 - a malformed body, whatever the parser says about it
        return refusal(400, f"The upload could not be read ({exc}).")
    parts = [v for _, v in form.multi_items() if isinstance(v, UploadFile)]
    if not parts:
        return refusal(400, "The upload carried no file.")
    if len(parts) > max_files:
        return refusal(413, over_count_limit(clean_name(parts[max_files].filename or "") or "a file", max_files))
    return parts
