"""Images through Pillow: re-encoded without metadata before they are stored, and thumbnails.

Guarantees:
- ``clean(data, media_type)`` decodes the image and encodes it again in the same format from its pixels only:
  EXIF (GPS location, camera, time), XMP, comments and text chunks are gone; the orientation EXIF asked for is
  applied to the pixels first, so the picture looks the same; an ICC colour profile is kept (colours, not
  people). Animated GIF and WebP keep every frame with its duration and loop. The returned bytes are what is
  stored, shown and sent to the model: the same bytes everywhere.
- A PNG with damaged ancillary chunks (a bad CRC on ``iCCP``, ``tEXt``, …) is read without them
  (``engine.files.png_chunks``), as browsers show it; only what cannot be decoded is refused.
- ``retouch(data, media_type)`` is ``clean`` for bytes a tool server sent (``engine.tools`` calls it through the
  hub's ``retouch``): the re-encoded image, or None when it is not a raster image that can be decoded.
- A file that Pillow cannot decode, one over ``MAX_PIXELS`` (a decompression bomb), or one whose decoded size
  (pixels × bands × bytes per sample × frames, from its header: ``engine.files.decoding``) is over the budget,
  raises ``ImageProblem`` with a sentence before anything is decoded; nothing is stored. ``precheck(data)`` is
  that header check alone (cheap: the pixels are not read).
- ``clean`` holds one decoded copy of a still image at a time (the orientation is applied only when EXIF asks).
- ``thumbnail(data)`` is a PNG (when the image has transparency) or a JPEG of at most ``THUMB`` px on its longer
  side; None when the bytes are not an image Pillow reads or are over the budget. A JPEG is decoded at a reduced
  size (Pillow's draft mode). The callers run both through ``engine.files.decoding.GATE``.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass

from PIL import Image, ImageOps, ImageSequence

from engine.files.decoding import GATE, DecodeCost, OverBudget, check
from engine.files.png_chunks import drop_damaged

THUMB = 320
ORIENTATION = 0x0112  # the EXIF tag
MAX_PIXELS = 64_000_000  # about 8000 x 8000
FORMATS = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WEBP"}


class ImageProblem(ValueError):
    """The bytes are not an image this app can re-encode; the message says so in a sentence."""


@dataclass(frozen=True, slots=True)
class Cleaned:
    data: bytes
    width: int
    height: int
    frames: int


def clean(data: bytes, media_type: str) -> Cleaned:
    image = _open(data)
    fmt = FORMATS[media_type]
    frames = getattr(image, "n_frames", 1) if fmt in ("GIF", "WEBP") else 1
    out = io.BytesIO()
    icc = image.info.get("icc_profile")
    extra = {"icc_profile": icc} if icc and fmt in ("PNG", "JPEG", "WEBP") else {}
    if frames > 1:
        pictures = [frame.copy() for frame in ImageSequence.Iterator(image)]
        durations = [int(frame.info.get("duration", 100) or 100) for frame in ImageSequence.Iterator(image)]
        for picture in pictures:
            picture.info = {}
        first = pictures[0]
        options = {"loop": int(image.info.get("loop", 0) or 0), "duration": durations}
        if fmt == "WEBP":
            options["quality"] = 90
        first.save(out, fmt, save_all=True, append_images=pictures[1:], **options)
        width, height = image.size
    else:
        picture = _upright(image)  # a copy only when EXIF asks for a rotation: one decoded copy at a time
        picture.info = {}
        if fmt == "JPEG" and picture.mode not in ("RGB", "L", "CMYK"):
            picture = picture.convert("RGB")
        options = {"quality": 92} if fmt in ("JPEG", "WEBP") else {"optimize": False}
        picture.save(out, fmt, **options, **extra)
        width, height = picture.size
    return Cleaned(out.getvalue(), width, height, frames)


def retouch(data: bytes, media_type: str) -> tuple[bytes, int, int] | None:
    """A tool's image re-encoded as ``clean`` does (on the decoding gate): its bytes, width and height; None when
    it cannot be."""
    if media_type not in FORMATS:
        return None
    try:
        cleaned = GATE.run(clean, data, media_type)
    except ImageProblem:
        return None
    return cleaned.data, cleaned.width, cleaned.height


def thumbnail(data: bytes) -> bytes | None:
    try:
        image = _open(data, load=False)
    except ImageProblem:
        return None
    image.thumbnail((THUMB, THUMB))  # loads it (a JPEG in draft mode: already reduced), then shrinks in place
    picture = _upright(image)
    out = io.BytesIO()
    if picture.mode in ("RGBA", "LA", "P", "PA"):
        picture.convert("RGBA").save(out, "PNG")
    else:
        picture.convert("RGB").save(out, "JPEG", quality=85)
    return out.getvalue()


def precheck(data: bytes) -> None:
    """Raise ``ImageProblem`` when the header says the image is too big to decode (its pixels are not read)."""
    _open(data, load=False)


def _upright(image: Image.Image) -> Image.Image:
    orientation = image.getexif().get(ORIENTATION, 1)
    return (ImageOps.exif_transpose(image) or image) if orientation not in (None, 1) else image


def _open(data: bytes, *, load: bool = True) -> Image.Image:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(drop_damaged(data)))
            if image.width * image.height > MAX_PIXELS:
                raise ImageProblem(
                    f"The image is {image.width}×{image.height} pixels; the limit is {MAX_PIXELS:,} pixels."
                )
            animated = image.format in ("GIF", "WEBP")
            check(DecodeCost.of(image, data, getattr(image, "n_frames", 1) if animated else 1))
            if load:
                image.load()
    except OverBudget as exc:
        raise ImageProblem(str(exc)) from None
    except ImageProblem:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise ImageProblem(f"The image has too many pixels; the limit is {MAX_PIXELS:,}.") from None
    except Exception as exc:  # noqa: BLE001 - Pillow raises many types for broken files
        raise ImageProblem(f"The image cannot be read ({type(exc).__name__}); it may be damaged.") from None
    return image
