"""Files on messages, through litellm's real HTTP path to the scripted upstream, on real TinyDB files and blob files:
what the upstream received is compared by hash with what the ledger recorded."""

from __future__ import annotations

import base64
import hashlib
import io
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from engine.engine import Engine, InputRejected
from engine.files import FileLimits, Files, models
from engine.provider import ProviderConfig
from engine.settings import EngineSettings, Limits
from store.blobs.folder import FolderBlobs
from store.tinydb.store import Store
from tests.support.engine import TEST_KEY
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until

VISION = "openai/lc-test-vision"
PLAIN = "openai/lc-test-text-only"
GPS_IFD = 0x8825


def photo_with_gps(size: tuple[int, int] = (64, 48)) -> bytes:
    image = Image.new("RGB", size, (200, 30, 30))
    for x in range(size[0]):
        image.putpixel((x, x % size[1]), (0, 0, 255))
    exif = Image.Exif()
    exif[0x010F] = "Spy Camera Co"  # Make
    exif.get_ifd(GPS_IFD).update({1: "N", 2: (48.0, 51.0, 29.0), 3: "E", 4: (2.0, 17.0, 40.0)})
    out = io.BytesIO()
    image.save(out, "JPEG", exif=exif, quality=95)
    return out.getvalue()


def sent_parts(record: Any) -> list[dict[str, Any]]:
    """The content parts of the last user message of a request, as the upstream received it."""
    users = [m for m in record.raw["messages"] if m.get("role") == "user"]
    content = users[-1]["content"]
    return content if isinstance(content, list) else [{"type": "text", "text": content}]


def image_hashes(record: Any) -> list[str]:
    found = []
    for message in record.raw["messages"]:
        content = message.get("content")
        for part in content if isinstance(content, list) else []:
            if part.get("type") == "image_url":
                url = part["image_url"]["url"]
                found.append(hashlib.sha256(base64.b64decode(url.split(",", 1)[1])).hexdigest())
    return found


@pytest.fixture
async def engine(tmp_path: Path, upstream: ScriptedUpstream) -> AsyncIterator[Engine]:
    models.declare({VISION: {"supports_vision": True}, PLAIN: {"supports_vision": False}})
    store = Store.open(tmp_path / "data", flush_interval=0.05)
    vision = ProviderConfig(model=VISION, api_base=upstream.base_url, api_key=TEST_KEY)
    plain = ProviderConfig(model=PLAIN, api_base=upstream.base_url, api_key=TEST_KEY)
    settings = EngineSettings(
        provider=vision,
        others=(plain,),
        limits=Limits(first_chunk_timeout=5.0, idle_timeout=2.0, resend_backoff=0.05),
        files=Files(FolderBlobs(tmp_path / "data" / "blobs"), FileLimits.from_mb(1)),
    )
    engine = Engine(store, settings)
    yield engine
    await engine.shutdown()
    store.close()


async def answered(engine: Engine, cid: str, upstream: ScriptedUpstream) -> None:
    await wait_until(lambda: not engine.is_streaming(cid), 10, "the answer")


async def test_an_image_reaches_the_model_as_the_stored_bytes_without_its_exif_location(
    engine: Engine, upstream: ScriptedUpstream
) -> None:
    original = photo_with_gps()
    attachment = await engine.files.accept("holiday.jpg", original)
    assert attachment.media_type == "image/jpeg" and (attachment.width, attachment.height) == (64, 48)
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="a red picture", chunk_delay=0.0))
    user_id, _ = await engine.send(cid, "what is this?", attachments=(attachment,))
    await answered(engine, cid, upstream)
    assert engine.conversation(cid).messages[user_id].attachments == (attachment,)
    assert image_hashes(upstream.last) == [attachment.sha256]
    parts = sent_parts(upstream.last)
    assert parts[0] == {"type": "text", "text": "what is this?"}
    received = base64.b64decode(parts[1]["image_url"]["url"].split(",", 1)[1])
    assert Image.open(io.BytesIO(original)).getexif().get_ifd(GPS_IFD)  # the tag was there
    cleaned = Image.open(io.BytesIO(received))
    assert not cleaned.getexif() and not cleaned.getexif().get_ifd(GPS_IFD) and b"Spy Camera" not in received


async def test_a_model_that_takes_no_images_refuses_before_anything_is_appended_or_sent(
    engine: Engine, upstream: ScriptedUpstream
) -> None:
    attachment = await engine.files.accept("photo.jpg", photo_with_gps())
    cid = engine.create_conversation()
    before = len(engine.events(cid))
    with pytest.raises(InputRejected, match=f"{PLAIN} does not take images \\(photo.jpg\\)"):
        await engine.send(cid, "look", model=PLAIN, attachments=(attachment,))
    assert len(engine.events(cid)) == before and upstream.records == []


async def test_a_file_over_the_limit_is_refused_with_the_limit_in_the_sentence(engine: Engine) -> None:
    with pytest.raises(InputRejected, match=r"big.bin is 1.5 MB; the limit is 1.0 MB per file"):
        await engine.files.accept("big.bin", b"\x01" * (1024 * 1024 * 3 // 2))
    with pytest.raises(InputRejected, match="empty"):
        await engine.files.accept("nothing.txt", b"")
