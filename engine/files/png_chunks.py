"""PNG files with damaged ancillary chunks, made readable: the damaged chunks are dropped, nothing else changes.

Guarantees:
- ``drop_damaged(data)`` walks a PNG's chunks and returns the same bytes without every *ancillary* chunk (the
  lower-case first letter: ``iCCP``, ``tEXt``, ``gAMA``, …) whose CRC does not match its type and data, as browsers
  do (Chromium ignores such a chunk and shows the image). A PNG with no damaged ancillary chunk comes back as the
  very same object; bytes that are not a PNG, or whose chunk structure is broken (a chunk running past the end), come
  back unchanged: the decoder then says what is wrong. A damaged *critical* chunk (``IHDR``, ``PLTE``, ``IDAT``,
  ``IEND``) is kept as it is: the image cannot be trusted, and the decoder refuses it.
- ``damaged(data)`` names the ancillary chunk types that would be dropped (for a log line or a test).
- Pure and quick: no decoding, one pass over the chunk headers and a CRC of each ancillary chunk.
"""

from __future__ import annotations

import struct
import zlib

SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunks(data: bytes) -> list[tuple[int, int, bytes, bool]] | None:
    """Each chunk as (start, end, type, CRC good), or None when the chunk structure is broken."""
    found: list[tuple[int, int, bytes, bool]] = []
    at = len(SIGNATURE)
    while at < len(data):
        if at + 8 > len(data):
            return None
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind = data[at + 4 : at + 8]
        end = at + 12 + length
        if end > len(data):
            return None
        ancillary = bool(kind[0] & 0x20)
        good = True
        if ancillary:
            (crc,) = struct.unpack(">I", data[end - 4 : end])
            good = zlib.crc32(data[at + 4 : end - 4]) & 0xFFFFFFFF == crc
        found.append((at, end, kind, good))
        at = end
        if kind == b"IEND":
            break
    return found


def damaged(data: bytes) -> list[str]:
    """The types of the ancillary chunks whose CRC is wrong (empty: none, or not a PNG)."""
    if not data.startswith(SIGNATURE):
        return []
    chunks = _chunks(data) or []
    return [kind.decode("latin-1") for _, _, kind, good in chunks if not good]


def drop_damaged(data: bytes) -> bytes:
    """The PNG without its damaged ancillary chunks (see the module's guarantees)."""
    if not data.startswith(SIGNATURE):
        return data
    chunks = _chunks(data)
    if chunks is None or all(good for *_, good in chunks):
        return data
    kept = [data[start:end] for start, end, _, good in chunks if good]
    return SIGNATURE + b"".join(kept)
