"""A request's messages with its files: history entries in, the messages litellm sends out.

Guarantees:
- A user entry without files is its plain message. With files, its ``content`` is a list: the text (when there
  is any), then one part per file in order: an image as an ``image_url`` part holding a ``data:`` URL of exactly
  the stored bytes; a PDF as a ``file`` part (``file_data`` as a ``data:`` URL) when litellm says the model takes
  PDF input, else its text extracted with pypdf (``engine.files.pdf``); a text file as a text part headed with
  its name (a resource's URI; a "/" prompt's text as it is, no heading) (at most ``MAX_TEXT_CHARS``, with a note
  when cut); any other file (audio included) as a line saying
  what it is. A blob that is gone becomes a line saying so. ``delivery`` decides which, for the request and for
  the page's chip before Send alike (``ui.file_delivery``).
- Tool entries are what ``engine.tools.result_parts.history_messages`` makes of them (one tool message each, and
  the step's images in one user message after its last tool message where the provider takes them no other
  way); other entries are ``HistoryEntry.as_message``.
- Blocking (reads blobs, encodes base64): call it on a worker thread (``messages_async``). Every request built
  from the same ledger carries the same bytes (same sha256): nothing here depends on the attempt.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable, Iterable
from typing import Any, Literal, assert_never

from engine.files.models import takes_images, takes_pdf
from engine.files.pdf import pdf_text
from engine.files.service import megabytes
from engine.files.sniff import PDF, RASTER, as_text, is_text
from engine.tools import history_messages
from ledger.events import Attachment
from ledger.history import HistoryEntry

Read = Callable[[str], bytes | None]
MAX_TEXT_CHARS = 200_000  # of one text file in a request (about 50,000 tokens); the blob keeps all of it
Part = dict[str, Any]
Delivery = Literal["image", "no-images", "pdf", "pdf-text", "text", "text-cut", "name-only", "gone"]


def messages(entries: Iterable[HistoryEntry], model: str, read: Read) -> list[dict[str, Any]]:
    def other(entry: HistoryEntry) -> dict[str, Any]:
        if entry.role == "user" and entry.attachments:
            return {"role": "user", "content": user_parts(entry, model, read)}
        return entry.as_message()

    return history_messages(entries, model, read, other)


async def messages_async(entries: Iterable[HistoryEntry], model: str, read: Read) -> list[dict[str, Any]]:
    listed = tuple(entries)
    if not any(e.attachments or e.parts for e in listed):
        return messages(listed, model, read)  # nothing to read: no thread needed
    return await asyncio.to_thread(messages, listed, model, read)


def user_parts(entry: HistoryEntry, model: str, read: Read) -> list[Part]:
    parts: list[Part] = [{"type": "text", "text": entry.content}] if entry.content else []
    for attachment in entry.attachments:
        parts.append(file_part(attachment, model, read))
    return parts


def delivery(a: Attachment, model: str, data: bytes | None) -> tuple[Delivery, str | None]:
    """How ``a`` goes to ``model`` (the same answer for the chip before Send and for the request), and its text
    where it goes as text."""
    if data is None:
        return "gone", None
    if a.media_type in RASTER:
        return ("image" if takes_images(model) else "no-images"), None
    if a.media_type == PDF:
        return ("pdf", None) if takes_pdf(model) else ("pdf-text", None)
    text = as_text(data) if is_text(a.media_type) else None
    if text is None:
        return "name-only", None
    return ("text-cut" if len(text) > MAX_TEXT_CHARS else "text"), text


def file_part(a: Attachment, model: str, read: Read) -> Part:
    data = read(a.sha256)
    how, text = delivery(a, model, data)
    match how:
        case "gone":
            return _text(f"[The file {a.name} ({a.media_type}) was attached, but it is no longer stored.]")
        case "image" | "no-images":  # a model that takes none was refused before (``engine.files.admit``)
            return {"type": "image_url", "image_url": {"url": data_url(a.media_type, data or b"")}}
        case "pdf":
            return {"type": "file", "file": {"filename": a.name, "file_data": data_url(PDF, data or b"")}}
        case "pdf-text":
            return _text(f"--- {a.name} (PDF, {megabytes(a.size)}, its text) ---\n{pdf_text(data or b'')}")
        case "text" | "text-cut":
            text = text or ""
            if how == "text-cut":
                cut = len(text) - MAX_TEXT_CHARS
                text = (
                    f"{text[:MAX_TEXT_CHARS]}\n[… {cut:,} more characters of {a.name} cut; the whole file is attached]"
                )
            if a.origin == "prompt":
                return _text(text)  # a "/" prompt's messages: the user's own words (``engine.files.fetched``)
            return _text(f"--- {a.ref if a.origin == 'resource' else a.name} ({a.media_type}) ---\n{text}")
        case "name-only":
            return _text(
                f"[The file {a.name} ({a.media_type}, {megabytes(a.size)}) was attached; it cannot be shown here.]"
            )
        case _:
            assert_never(how)


def data_url(media_type: str, data: bytes) -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode('ascii')}"


def _text(text: str) -> Part:
    return {"type": "text", "text": text}
