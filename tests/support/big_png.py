"""PNGs that are small on disk and huge decoded (issue 42's decoding budget), written without holding the pixels.

``flat_png(width, height, channels, bits)`` streams zlib over one blank row at a time: a 7999×7999 RGB image at 16
bits per channel is about 0.4 MB of file and 384 MB decoded. ``channels``: 1 grey, 2 grey+alpha, 3 RGB, 4 RGBA.
"""

from __future__ import annotations

import struct
import zlib

COLOUR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}


def chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def flat_png(width: int, height: int, channels: int = 3, bits: int = 16) -> bytes:
    header = struct.pack(">IIBBBBB", width, height, bits, COLOUR_TYPES[channels], 0, 0, 0)
    row = bytes(1 + width * channels * bits // 8)  # filter byte 0, then blank samples
    packer = zlib.compressobj(9)
    body = b"".join(packer.compress(row) for _ in range(height)) + packer.flush()
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", body) + chunk(b"IEND", b"")
