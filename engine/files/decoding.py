"""Decoding images within a memory budget: what a decode will take is read from the header first, and at most
``DECODES_AT_ONCE`` decodes run at a time, the others waiting in the order they came.

Guarantees:
- ``DecodeCost.of(image, data)`` is read from an opened, not yet loaded, Pillow image (its header): width × height ×
  bands × bytes per sample × frames, the sample size as the file declares it (a 16-bit PNG counts 2 bytes per channel,
  from its IHDR, though Pillow keeps 8; an animation's frames count as RGBA, as Pillow keeps them). ``check(cost)``
  raises ``OverBudget`` with a sentence (size, depth, what it would take, the limit) when it is over
  ``MAX_DECODED_BYTES``: nothing is decoded.
- ``GATE.run(fn, *args)`` runs ``fn`` on one of ``DECODES_AT_ONCE`` decoding threads (a first-in, first-out
  queue: the others wait in order), blocking the caller; ``await GATE.run_async(...)`` waits without holding a
  thread. On a decoding thread itself it runs ``fn`` at once (no deadlock). ``GATE.waiting`` is how many wait.
- The decoding threads run ``DECODE_NICE`` steps nicer than the event loop (Linux), so pages stay quick while
  images decode: an upload waits longer on a busy machine, a page does not.
- After every decode the memory is given back to the system (``malloc_trim``, where the C library has it):
  Pillow's blocks are freed into malloc's arenas, which otherwise keep the peak of the busiest burst.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from PIL import Image

T = TypeVar("T")
MB = 1024 * 1024
MAX_DECODED_BYTES = 400 * MB  # a 7999×7999 RGB image at 16 bits per channel (384 MB) fits; with alpha it does not
DECODES_AT_ONCE = 2
DECODE_NICE = 10
WIDE_MODES = {"I;16": 2, "I;16B": 2, "I;16L": 2, "I;16N": 2, "I": 4, "F": 4}
PNG_BANDS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}  # IHDR colour type -> channels


class OverBudget(ValueError):
    """Decoding this image would take more memory than one image may; the message says so in a sentence."""


@dataclass(frozen=True, slots=True)
class DecodeCost:
    width: int
    height: int
    bands: int
    sample_bytes: int
    frames: int = 1

    @property
    def decoded_bytes(self) -> int:
        return self.width * self.height * self.bands * self.sample_bytes * self.frames

    @classmethod
    def of(cls, image: Image.Image, data: bytes, frames: int = 1) -> DecodeCost:
        bands, sample = len(image.getbands()), WIDE_MODES.get(image.mode, 1)
        if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR" and len(data) >= 26:
            depth, colour = data[24], data[25]
            bands = max(bands, PNG_BANDS.get(colour, bands))
            sample = max(sample, 2 if depth == 16 else 1)
        if frames > 1:  # Pillow keeps every frame after the first as RGB(A), whatever the file's palette
            bands = max(bands, 4)
        return cls(image.width, image.height, bands, sample, max(1, frames))

    def words(self) -> str:
        frames = f", {self.frames} frames" if self.frames > 1 else ""
        bits = self.sample_bytes * 8
        return f"{self.width}×{self.height} pixels, {self.bands} channel(s) at {bits} bits{frames}"


def check(cost: DecodeCost, limit: int = MAX_DECODED_BYTES) -> None:
    need = cost.decoded_bytes
    if need > limit:
        raise OverBudget(
            f"The image is {cost.words()}: decoding it would take {need / MB:.0f} MB of memory, more than the "
            f"{limit / MB:.0f} MB one image may take. Save it smaller or at 8 bits per channel and attach it again."
        )


class DecodeGate:
    """At most ``size`` decodes at once, in arrival order (a thread pool's queue is first-in, first-out)."""

    def __init__(self, size: int = DECODES_AT_ONCE) -> None:
        self._pool = ThreadPoolExecutor(max_workers=size, thread_name_prefix="lc-decode", initializer=_yield_cpu)
        self._lock = threading.Lock()
        self._queued = 0
        self._trim = getattr(ctypes.CDLL(None), "malloc_trim", None) if sys.platform == "linux" else None

    @property
    def waiting(self) -> int:
        """Decodes queued but not yet started."""
        return self._queued

    def run(self, fn: Callable[..., T], *args: object) -> T:
        if threading.current_thread().name.startswith("lc-decode"):
            return fn(*args)
        return self._submit(fn, *args).result()

    async def run_async(self, fn: Callable[..., T], *args: object) -> T:
        return await asyncio.wrap_future(self._submit(fn, *args))

    def _submit(self, fn: Callable[..., T], *args: object) -> Future[T]:
        with self._lock:
            self._queued += 1
        return self._pool.submit(self._decode, fn, *args)

    def _decode(self, fn: Callable[..., T], *args: object) -> T:
        with self._lock:
            self._queued -= 1
        try:
            return fn(*args)
        finally:
            if self._trim is not None:
                self._trim(0)


def _yield_cpu() -> None:
    """A decoding thread runs ``DECODE_NICE`` steps nicer than the rest (Linux: nice is per thread), so that pages
    are served first while images decode; elsewhere nothing changes."""
    if sys.platform != "linux":
        return
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + DECODE_NICE))
    except OSError:
        pass


GATE = DecodeGate()
