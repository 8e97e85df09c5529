"""What a file is, read from its bytes (never from its name, except to tell one text type from another).

Guarantees:
- ``sniff(name, data)`` returns a media type: ``image/png``, ``image/jpeg``, ``image/gif``, ``image/webp``,
  ``application/pdf`` and WAV, Ogg, FLAC and MP3 audio by their magic bytes; SVG (``image/svg+xml``) and HTML
  (``text/html``) by their first markup, recognised so they are stored and downloaded as such and never
  rendered; any other UTF-8 text without NUL bytes is text (``text/csv``, ``application/json``,
  ``text/markdown`` by the name's suffix, else ``text/plain``); anything else ``application/octet-stream``. A
  ``.png`` name on text bytes is text.
- ``RASTER`` are the types Pillow re-encodes and a page may show inline; ``is_text`` says which types are sent to
  a model as their text.
"""

from __future__ import annotations

from pathlib import PurePosixPath

RASTER = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
PDF = "application/pdf"
OCTET = "application/octet-stream"
TEXT_BY_SUFFIX = {
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".json": "application/json",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
}
TEXT_TYPES = frozenset({"image/svg+xml", "text/html", "application/json", *TEXT_BY_SUFFIX.values()})
_SNIFF_BYTES = 4096


def sniff(name: str, data: bytes) -> str:
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data.lstrip(b"\x00\t\n\r ")[:5] == b"%PDF-" or data[:1024].find(b"%PDF-") == 0:
        return PDF
    audio = _audio(data)
    if audio is not None:
        return audio
    text = as_text(data)
    if text is None:
        return OCTET
    head = text[:_SNIFF_BYTES].lstrip("\ufeff \t\r\n").lower()
    if head.startswith("<svg") or (head.startswith("<?xml") and "<svg" in head):
        return "image/svg+xml"
    if head.startswith(("<!doctype html", "<html")) or ("<html" in head and "<body" in head):
        return "text/html"
    return TEXT_BY_SUFFIX.get(PurePosixPath(name.lower()).suffix, "text/plain")


def _audio(data: bytes) -> str | None:
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "audio/wav"
    if data.startswith(b"OggS"):
        return "audio/ogg"
    if data.startswith(b"fLaC"):
        return "audio/flac"
    if data.startswith(b"ID3") or (len(data) > 1 and data[0] == 0xFF and data[1] & 0xE0 == 0xE0):
        return "audio/mpeg"
    return None


def as_text(data: bytes) -> str | None:
    """The bytes as text when they are UTF-8 without NUL bytes, else None."""
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def is_text(media_type: str) -> bool:
    return media_type.startswith("text/") or media_type in TEXT_TYPES
