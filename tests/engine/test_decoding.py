"""Decoding images within a memory budget (issue 42 item 2): the decoded size is read from the header, an image over
the budget is refused with a sentence before anything is decoded, and at most two decodes run at once, in order."""

from __future__ import annotations

import asyncio
import io
import threading
import time
from collections.abc import Callable

import pytest
from PIL import Image

from engine.files import Files
from engine.files.decoding import MAX_DECODED_BYTES, DecodeCost, DecodeGate
from ledger.decide import InputRejected
from tests.support.big_png import flat_png
from tests.support.waiting import wait_until


def opened(data: bytes) -> Image.Image:
    return Image.open(io.BytesIO(data))


def saved(image: Image.Image, fmt: str, **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt, **options)
    return out.getvalue()


def test_the_decoded_size_is_pixels_bands_bytes_per_sample_and_frames_from_the_header() -> None:
    rgb16 = flat_png(100, 50, channels=3, bits=16)
    assert DecodeCost.of(opened(rgb16), rgb16).decoded_bytes == 100 * 50 * 3 * 2, "16 bits as the file declares"
    grey16 = saved(Image.new("I;16", (40, 30)), "PNG")
    assert DecodeCost.of(opened(grey16), grey16).decoded_bytes == 40 * 30 * 2
    jpeg = saved(Image.new("RGB", (64, 32)), "JPEG")
    assert DecodeCost.of(opened(jpeg), jpeg).decoded_bytes == 64 * 32 * 3
    frames = [Image.new("RGB", (10, 10), (60 * n, 0, 0)) for n in range(4)]
    gif = saved(frames[0], "GIF", save_all=True, append_images=frames[1:])
    image = opened(gif)
    assert image.n_frames == 4
    assert DecodeCost.of(image, gif, image.n_frames).decoded_bytes == 10 * 10 * 4 * 4, "frames kept as RGBA"


async def test_an_image_over_the_budget_is_refused_with_a_sentence_before_anything_is_decoded() -> None:
    data = flat_png(7999, 7999, channels=4, bits=16)  # about 0.5 MB of file, 488 MB decoded
    assert len(data) < 600_000
    files = Files()
    started = time.perf_counter()
    with pytest.raises(InputRejected) as refused:
        await files.accept("huge.png", data)
    assert time.perf_counter() - started < 1.0, "the header alone was read (decoding takes seconds)"
    assert str(refused.value) == (
        "huge.png: The image is 7999×7999 pixels, 4 channel(s) at 16 bits: decoding it would take 488 MB of memory, "
        f"more than the {MAX_DECODED_BYTES // 2**20} MB one image may take. Save it smaller or at 8 bits per channel "
        "and attach it again."
    )
    assert not files.blobs.has("0" * 64) and files.thumbnail("0" * 64) is None


async def test_the_issues_7999_square_16_bit_png_is_accepted_within_the_budget() -> None:
    data = flat_png(7999, 7999, channels=3, bits=16)  # 384 MB decoded as declared; Pillow holds 8 bits per channel
    made = await Files().accept("big.png", data)
    assert (made.width, made.height, made.media_type) == (7999, 7999, "image/png")


def ended(running: list[int], n: int) -> Callable[[], bool]:
    return lambda: n not in running


async def test_at_most_two_decodes_run_at_once_and_the_others_start_in_the_order_they_came() -> None:
    gate = DecodeGate(2)
    release = [threading.Event() for _ in range(6)]
    running: list[int] = []
    started: list[int] = []
    most = 0
    lock = threading.Lock()

    def decode(n: int) -> int:
        nonlocal most
        with lock:
            running.append(n)
            started.append(n)
            most = max(most, len(running))
        release[n].wait(10)
        with lock:
            running.remove(n)
        return n

    jobs = [asyncio.ensure_future(gate.run_async(decode, n)) for n in range(6)]
    await wait_until(lambda: started == [0, 1] and gate.waiting == 4, what="two decoding, four waiting")
    for n in (1, 0, 2, 3, 4, 5):  # the first two end out of order; the rest still start in arrival order
        release[n].set()
        await wait_until(ended(running, n), what=f"decode {n} ended")
    assert await asyncio.gather(*jobs) == list(range(6))
    assert started == [0, 1, 2, 3, 4, 5] and most == 2 and gate.waiting == 0
