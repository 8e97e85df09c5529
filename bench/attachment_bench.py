"""Attachment benchmark (not a test): sending a 10 MB image, against a text-only send in the same run.

    nice -n 10 .venv/bin/python -m bench.attachment_bench

Runs the test upstream on 127.0.0.1 (in this process: its request log is emptied after every request, so what it
keeps is not counted) and an engine on real TinyDB files with the blob files under the data dir. Prints:
- the time to take the image in (``Files.accept``: sniff, Pillow re-encode, hash, atomic write);
- Send → the request leaving the app, as the time from ``Engine.send`` (or ``retry``) to the upstream receiving
  the whole request (its ``received_at``), for a text-only send and for the image (first send and 3 Retries), with
  the ratio;
- the app's memory: RSS and Python's allocations (tracemalloc, traced from before the first send) after each
  attempt, once it ended and a collection ran; the growth per attempt against the image's size shows whether an
  attempt keeps a copy of the bytes (base64 of 10 MB is 13.3 MB).
"""

from __future__ import annotations

import asyncio
import gc
import io
import os
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path

from PIL import Image

from demo.server.endpoint import serve_in_thread
from engine.commands.assembly import build_engine
from engine.commands.engine import Engine
from engine.files import FileLimits, Files, models
from engine.offline import litellm
from engine.provider.calls import ProviderConfig
from engine.turns.settings import EngineSettings, Limits
from store.blobs.folder import FolderBlobs
from store.tinydb.store import Store
from tests.support.upstream import Behavior, ScriptedUpstream

MODEL = "openai/bench-vision"
RETRIES = 3
TEXT_SENDS = 5
MB = 1024 * 1024


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def noise_png(target: int = 10 * MB) -> bytes:
    side = int((target / 3) ** 0.5)
    image = Image.frombytes("RGB", (side, side), os.urandom(side * side * 3))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


async def until_received(engine: Engine, cid: str, upstream: ScriptedUpstream, t0: float) -> float:
    while not upstream.records:
        await asyncio.sleep(0.0005)
    received = upstream.records[-1].received_at
    while engine.is_streaming(cid):
        await asyncio.sleep(0.002)
    upstream.records.clear()  # the upstream's copy of the request is not the app's memory
    return (received - t0) * 1000


def memory(label: str, base: tuple[float, int]) -> tuple[float, int]:
    gc.collect()
    rss, traced = rss_mb(), tracemalloc.get_traced_memory()[0]
    print(f"  {label:<28} RSS {rss:7.1f} MB ({rss - base[0]:+7.1f})   traced {traced / MB:7.1f} MB "
          f"({(traced - base[1]) / MB:+7.1f})")  # fmt: skip
    return rss, traced


async def main() -> None:
    litellm()
    models.declare({MODEL: {"supports_vision": True}})
    upstream = ScriptedUpstream(chunk_delay=0.0)
    base_url, stop = serve_in_thread(upstream)
    upstream.base_url = base_url
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "data", flush_interval=0.05)
        settings = EngineSettings(
            provider=ProviderConfig(model=MODEL, api_base=base_url, api_key="sk-bench-000000000000"),
            limits=Limits(first_chunk_timeout=30, idle_timeout=30),
            files=Files(FolderBlobs(Path(tmp) / "data" / "blobs"), FileLimits.from_mb(20)),
        )
        engine = build_engine(store, settings)
        data = noise_png()
        t = time.perf_counter()
        attachment = await engine.files.accept("noise.png", data)
        accept_ms = (time.perf_counter() - t) * 1000
        del data
        print(f"image: {attachment.size / MB:.1f} MB PNG {attachment.width}×{attachment.height}; "
              f"accept (sniff, re-encode, hash, write) {accept_ms:.0f} ms")  # fmt: skip

        text_ms = []
        for n in range(TEXT_SENDS):
            cid = engine.create_conversation()
            upstream.plan(Behavior(text="ok", chunk_delay=0.0))
            t0 = time.monotonic()
            await engine.send(cid, f"text only {n}")
            text_ms.append(await until_received(engine, cid, upstream, t0))

        tracemalloc.start()
        gc.collect()
        base = (rss_mb(), tracemalloc.get_traced_memory()[0])
        print("memory (after each attempt ended, gc.collect()):")
        memory("before the image send", base)
        cid = engine.create_conversation()
        upstream.plan(Behavior(text="ok", chunk_delay=0.0))
        t0 = time.monotonic()
        _, answer_id = await engine.send(cid, "describe", attachments=(attachment,))
        image_ms = [await until_received(engine, cid, upstream, t0)]
        after = [memory("after the send", base)]
        for n in range(RETRIES):
            upstream.plan(Behavior(text="ok", chunk_delay=0.0))
            t0 = time.monotonic()
            await engine.retry(cid, answer_id)
            image_ms.append(await until_received(engine, cid, upstream, t0))
            after.append(memory(f"after Retry {n + 1}", base))
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        growth = (after[-1][1] - after[0][1]) / RETRIES / MB
        text = statistics.median(text_ms)
        print(f"Send → request received upstream: text-only median {text:.1f} ms ({len(text_ms)} sends); "
              f"10 MB image: first {image_ms[0]:.0f} ms, Retries " + ", ".join(f"{v:.0f}" for v in image_ms[1:])
              + f" ms; ratio (image median / text median) {statistics.median(image_ms) / text:.0f}x")  # fmt: skip
        size = attachment.size / MB
        print(
            f"traced memory per Retry after the first send: {growth:+.2f} MB (image {size:.1f} MB, its base64 "
            f"{size * 4 / 3:.1f} MB); traced peak during the sends {peak / MB:.0f} MB (with the upstream)"
        )
        await engine.shutdown()
        store.close()
    stop()


if __name__ == "__main__":
    asyncio.run(main())
