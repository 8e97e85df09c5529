"""What a file is, read from its bytes (never from its name, except to tell one text type from another).

Guarantees:
- ``SIGNATURES`` is the one table of magic bytes in the app; ``signature(data)`` names the media type the bytes'
  own signature says (PNG, JPEG, GIF and WebP images, PDF, WAV, Ogg, FLAC, MP3 and M4A audio), else None. The
  file routes serve bytes inline by it alone (``ui.files_routes``).
- ``sniff(name, data)`` returns the media type a file is stored as: the image, PDF and audio types by their
  signature (M4A aside: it is stored as ``application/octet-stream``, as it always was); SVG (``image/svg+xml``)
  and HTML (``text/html``) by their first markup, recognised so they are stored and downloaded as such and never
  rendered; any other UTF-8 text without NUL bytes is text (``text/csv``, ``application/json``,
  ``text/markdown`` by the name's suffix, else ``text/plain``); anything else ``application/octet-stream``. A
  ``.png`` name on text bytes is text.
- ``RASTER`` are the types Pillow re-encodes and a page may show inline, ``AUDIO`` the audio types a page may
  play; ``is_text`` says which types are sent to a model as their text.
"""

from __future__ import annotations

from pathlib import PurePosixPath

RASTER = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
AUDIO = frozenset({"audio/wav", "audio/ogg", "audio/flac", "audio/mpeg", "audio/mp4"})
PDF = "application/pdf"
OCTET = "application/octet-stream"
M4A = "audio/mp4"
TEXT_BY_SUFFIX = {
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".json": "application/json",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
}
TEXT_TYPES = frozenset({"image/svg+xml", "text/html", "application/json", *TEXT_BY_SUFFIX.values()})
#: The media types known by their bytes, in the order they are tried: each with the magic bytes it needs and the
#: offset they stand at. A PDF (after leading blanks) and an MP3 frame (a bit pattern) are tried in ``signature``.
SIGNATURES: tuple[tuple[str, tuple[tuple[int, bytes], ...]], ...] = (
    ("image/png", ((0, b"\x89PNG\r\n\x1a\n"),)),
    ("image/jpeg", ((0, b"\xff\xd8\xff"),)),
    ("image/gif", ((0, b"GIF87a"),)),
    ("image/gif", ((0, b"GIF89a"),)),
    ("image/webp", ((0, b"RIFF"), (8, b"WEBP"))),
    ("audio/wav", ((0, b"RIFF"), (8, b"WAVE"))),
    ("audio/ogg", ((0, b"OggS"),)),
    ("audio/flac", ((0, b"fLaC"),)),
    ("audio/mpeg", ((0, b"ID3"),)),
)
_SNIFF_BYTES = 4096


def signature(data: bytes) -> str | None:
    """The media type the bytes' own signature names (see ``SIGNATURES``), else None."""
    for media_type, marks in SIGNATURES:
        if all(data[at : at + len(magic)] == magic for at, magic in marks):
            return media_type
    if data.lstrip(b"\x00\t\n\r ")[:5] == b"%PDF-":
        return PDF
    if len(data) > 1 and data[0] == 0xFF and data[1] & 0xE0 == 0xE0:  # an MP3 frame without an ID3 tag
        return "audio/mpeg"
    if data[4:11] == b"ftypM4A":
        return M4A
    return None


def sniff(name: str, data: bytes) -> str:
    signed = signature(data)
    if signed is not None and signed != M4A:
        return signed
    text = as_text(data)
    if text is None:
        return OCTET
    head = text[:_SNIFF_BYTES].lstrip("\ufeff \t\r\n").lower()
    if head.startswith("<svg") or (head.startswith("<?xml") and "<svg" in head):
        return "image/svg+xml"
    if head.startswith(("<!doctype html", "<html")) or ("<html" in head and "<body" in head):
        return "text/html"
    return TEXT_BY_SUFFIX.get(PurePosixPath(name.lower()).suffix, "text/plain")


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
