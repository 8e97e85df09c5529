"""A tool result over the bound (``ledger.bounds.TEXT_BOUND``, 1 MB of UTF-8): kept whole as a blob, recorded as its
preview (``ledger.events.ToolResult.whole``), so an event, a page and a request never carry all of it.

Guarantees:
- ``bound(text, parts, structured, blobs)`` returns them unchanged (and no ``TextRef``) when none is over the bound.
  Otherwise the whole text (the result's text, then each part text or structured content over the bound that it
  does not already hold) is put in the blob store (``store.blobs.keep_text``), and the result comes back with the
  text's preview, each part's text cut to its preview, structured content over the bound dropped (JSON cut short is
  no JSON: the whole text holds it), and the ``TextRef`` of the whole. Every text is valid UTF-8 first
  (``engine.text.valid_text``), so the blob holds exactly what the ledger would have held.
- The work (joining, encoding, hashing, writing) runs on a worker thread, never on the event loop.
- A blob store that refuses the text (full disk, ``BlobTooLarge``) leaves the result whole, as before the bound,
  with a warning in the log: a result is never lost for want of a blob.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace

from engine.text import valid_text
from ledger.bounds import is_over, preview
from ledger.events import TextRef, ToolPart
from store.blobs import BlobStore, keep_text

log = logging.getLogger("ledger_chat.tools")
Bounded = tuple[str, tuple[ToolPart, ...], str | None, TextRef | None]


async def bound(text: str, parts: tuple[ToolPart, ...], structured: str | None, blobs: BlobStore) -> Bounded:
    texts = (text, *(p.text for p in parts if p.text), *([structured] if structured is not None else []))
    if not any(is_over(t) for t in texts):
        return text, parts, structured, None
    try:
        return await asyncio.to_thread(_bound, text, parts, structured, blobs)
    except Exception as exc:  # noqa: BLE001 - a store that refuses the blob leaves the result as it was
        log.warning("a tool result of %d characters could not be kept as a blob (%s): kept whole", len(text), exc)
        return text, parts, structured, None


def _bound(text: str, parts: tuple[ToolPart, ...], structured: str | None, blobs: BlobStore) -> Bounded:
    text = valid_text(text)
    others = [valid_text(p.text) for p in parts if p.text and is_over(p.text)]
    if structured is not None and is_over(structured):
        others.append(valid_text(structured))
        structured = None
    whole = "\n\n".join([text, *(other for other in others if other not in text)])
    _, ref = keep_text(blobs, whole)
    if ref is None:  # the text alone was within the bound, and so were the others once made valid
        return text, parts, structured, None
    cut = tuple(replace(p, text=preview(p.text)) if p.text and is_over(p.text) else p for p in parts)
    return preview(text), cut, structured, ref
