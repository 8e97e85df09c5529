"""The text of a PDF, for models that do not take PDF input (pypdf, page by page).

Guarantees: ``pdf_text(data)`` never raises: a PDF pypdf cannot read, or one without text, gives a sentence
saying so; at most ``MAX_CHARS`` characters (with a note when cut).
"""

from __future__ import annotations

import io
import logging

log = logging.getLogger("ledger_chat.files")
MAX_CHARS = 200_000


def pdf_text(data: bytes) -> str:
    try:
        from pypdf import PdfReader

        reader = PdfReader(io.BytesIO(data))
        pages = [f"[page {n}]\n{(page.extract_text() or '').strip()}" for n, page in enumerate(reader.pages, 1)]
    except Exception as exc:  # noqa: BLE001 - pypdf raises many types for broken files
        log.warning("a PDF could not be read: %s", exc)
        return "[The PDF could not be read.]"
    text = "\n\n".join(pages)
    if not any(line.strip() and not line.startswith("[page ") for line in text.splitlines()):
        return "[The PDF has no text that could be extracted (it may be scanned images).]"
    if len(text) > MAX_CHARS:
        return f"{text[:MAX_CHARS]}\n[… {len(text) - MAX_CHARS:,} more characters cut]"
    return text
