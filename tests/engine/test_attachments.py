"""Files on messages, through litellm's real HTTP path to the scripted upstream, on real TinyDB files and blob files:
what the upstream received is compared by hash with what the ledger recorded."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from engine.commands.assembly import build_engine
from engine.commands.engine import Engine, InputRejected
from engine.files import FileLimits, Files, models
from engine.offline import litellm
from engine.provider.calls import ProviderConfig
from engine.turns.settings import EngineSettings, Limits
from store.blobs.folder import FolderBlobs
from store.tinydb.store import Store
from tests.support.engine import TEST_KEY
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until

VISION = "openai/lc-test-vision"
OTHER_VISION = "openai/lc-test-vision-2"
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
    models.declare(
        {
            VISION: {"supports_vision": True, "supports_pdf_input": True},
            OTHER_VISION: {"supports_vision": True},
            PLAIN: {"supports_vision": False},
        }
    )
    store = Store.open(tmp_path / "data", flush_interval=0.05)
    vision = ProviderConfig(model=VISION, api_base=upstream.base_url, api_key=TEST_KEY)
    plain = ProviderConfig(model=PLAIN, api_base=upstream.base_url, api_key=TEST_KEY)
    other = ProviderConfig(model=OTHER_VISION, api_base=upstream.base_url, api_key=TEST_KEY)
    settings = EngineSettings(
        provider=vision,
        others=(plain, other),
        limits=Limits(first_chunk_timeout=5.0, idle_timeout=2.0, resend_backoff=0.05),
        files=Files(FolderBlobs(tmp_path / "data" / "blobs"), FileLimits.from_mb(1)),
    )
    engine = build_engine(store, settings)
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


def small_pdf() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (40, 30), (255, 255, 255)).save(out, "PDF")
    return out.getvalue()


async def test_retry_edit_retry_with_another_model_and_branch_send_the_same_image_bytes(
    engine: Engine, upstream: ScriptedUpstream
) -> None:
    image = await engine.files.accept("holiday.jpg", photo_with_gps())
    table = await engine.files.accept("prices.csv", b"item,price\napple,3\npear,4\n")
    cid = engine.create_conversation()
    upstream.plan(*(Behavior(text="ok", chunk_delay=0.0) for _ in range(6)))
    user_id, answer_id = await engine.send(cid, "compare", attachments=(image, table))
    await answered(engine, cid, upstream)
    await engine.retry(cid, answer_id)
    await answered(engine, cid, upstream)
    await engine.retry(cid, answer_id, model=OTHER_VISION)
    await answered(engine, cid, upstream)
    await engine.edit(cid, user_id, "compare again")  # attachments None: the same files
    await answered(engine, cid, upstream)
    new_cid, draft = engine.branch(cid, answer_id)
    await engine.send(new_cid, "and now?")
    await answered(engine, new_cid, upstream)
    assert [r.model for r in upstream.records].count(OTHER_VISION.split("/", 1)[1]) == 1
    assert [image_hashes(r) for r in upstream.records] == [[image.sha256]] * 5
    first = sent_parts(upstream.records[0])
    assert first[2] == {"type": "text", "text": "--- prices.csv (text/csv) ---\nitem,price\napple,3\npear,4\n"}
    assert sent_parts(upstream.records[3])[0] == {"type": "text", "text": "compare again"}
    assert sent_parts(upstream.records[3])[1:] == first[1:]


async def test_an_edit_can_remove_or_change_the_files(engine: Engine, upstream: ScriptedUpstream) -> None:
    image = await engine.files.accept("a.png", _png())
    notes = await engine.files.accept("notes.md", b"# Notes\n\nfirst line\n")
    assert notes.media_type == "text/markdown"
    cid = engine.create_conversation()
    upstream.plan(*(Behavior(text="ok", chunk_delay=0.0) for _ in range(2)))
    user_id, _ = await engine.send(cid, "see", attachments=(image,))
    await answered(engine, cid, upstream)
    edited_id, _ = await engine.edit(cid, user_id, "see this instead", attachments=(notes,))
    await answered(engine, cid, upstream)
    assert engine.conversation(cid).messages[edited_id].attachments == (notes,)
    assert image_hashes(upstream.last) == []
    assert sent_parts(upstream.last)[1]["text"].startswith("--- notes.md (text/markdown) ---\n# Notes")


async def test_a_pdf_goes_as_a_file_part_where_the_model_takes_pdf_and_as_its_text_elsewhere(
    engine: Engine, upstream: ScriptedUpstream
) -> None:
    pdf = await engine.files.accept("scan.pdf", small_pdf())
    assert pdf.media_type == "application/pdf"
    cid = engine.create_conversation()
    upstream.plan(*(Behavior(text="ok", chunk_delay=0.0) for _ in range(2)))
    _, answer_id = await engine.send(cid, "read it", attachments=(pdf,))
    await answered(engine, cid, upstream)
    part = sent_parts(upstream.last)[1]
    assert part["type"] == "file"
    data = base64.b64decode(part["file"]["file_data"].split(",", 1)[1])
    assert hashlib.sha256(data).hexdigest() == pdf.sha256
    await engine.retry(cid, answer_id, model=PLAIN)
    await answered(engine, cid, upstream)
    text = sent_parts(upstream.last)[1]["text"]
    assert text.startswith("--- scan.pdf (PDF,") and "no text that could be extracted" in text


async def test_files_are_sniffed_from_their_bytes_never_their_names(engine: Engine) -> None:
    assert (await engine.files.accept("photo.png", b"just some words\n")).media_type == "text/plain"
    assert (await engine.files.accept("notes.txt", _png())).media_type == "image/png"
    svg = await engine.files.accept("logo.png", b"<svg xmlns='http://www.w3.org/2000/svg'><script>x()</script></svg>")
    assert svg.media_type == "image/svg+xml" and svg.width is None
    assert (await engine.files.accept("page.txt", b"<!DOCTYPE html><html><body>hi")).media_type == "text/html"
    assert (await engine.files.accept("data.csv", b"\x00\x01\x02binary")).media_type == "application/octet-stream"
    wav = b"RIFF\x24\x00\x00\x00WAVEfmt " + b"\x00" * 32
    assert (await engine.files.accept("voice.txt", wav)).media_type == "audio/wav"
    assert (await engine.files.accept("song.csv", b"ID3\x04\x00" + b"\x00" * 20)).media_type == "audio/mpeg"
    with pytest.raises(InputRejected, match="broken.png: The image cannot be read"):
        await engine.files.accept("broken.png", b"\x89PNG\r\n\x1a\n" + b"garbage" * 10)


async def test_a_damaged_blob_file_reads_as_missing_and_the_model_is_told(
    engine: Engine, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    notes = await engine.files.accept("notes.txt", b"hello\n")
    path = tmp_path / "data" / "blobs" / notes.sha256[:2] / notes.sha256
    path.write_bytes(b"not what was stored")
    (tmp_path / "data" / "blobs" / "zz").mkdir()
    (tmp_path / "data" / "blobs" / "zz" / "foreign").write_bytes(b"x")
    assert engine.files.read(notes.sha256) is None and engine.files.thumbnail(notes.sha256) is None
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="ok", chunk_delay=0.0))
    await engine.send(cid, "read", attachments=(notes,))  # the file is there (``has``), its bytes are not right
    await answered(engine, cid, upstream)
    assert "no longer stored" in sent_parts(upstream.last)[1]["text"]


async def test_a_message_with_too_many_files_or_too_many_bytes_is_refused_before_sending(
    engine: Engine, upstream: ScriptedUpstream
) -> None:
    files = [await engine.files.accept(f"n{i}.txt", f"note {i}\n".encode()) for i in range(11)]
    cid = engine.create_conversation()
    with pytest.raises(InputRejected, match="at most 10 files; this one has 11"):
        await engine.send(cid, "many", attachments=tuple(files))
    assert upstream.records == [] and len(engine.events(cid)) == 1


async def test_thumbnails_are_at_most_320_px(engine: Engine) -> None:
    big = await engine.files.accept("wide.png", _png((900, 300)))
    thumb = engine.files.thumbnail(big.sha256)
    assert thumb is not None and Image.open(io.BytesIO(thumb)).size == (320, 107)


def _png(size: tuple[int, int] = (20, 10)) -> bytes:
    out = io.BytesIO()
    Image.new("RGBA", size, (0, 128, 0, 255)).save(out, "PNG")
    return out.getvalue()


async def test_the_demo_model_describes_the_files_it_received(engine: Engine, upstream: ScriptedUpstream) -> None:
    image = await engine.files.accept("holiday.jpg", photo_with_gps())
    table = await engine.files.accept("prices.csv", b"item,price\napple,3\npear,4\nplum,5\n")
    pdf = await engine.files.accept("scan.pdf", small_pdf())
    cid = engine.create_conversation()
    _, answer_id = await engine.send(cid, "what are these?", attachments=(image, table, pdf))  # no plan: the demo
    await answered(engine, cid, upstream)
    text = engine.conversation(cid).attempts[engine.conversation(cid).messages[answer_id].attempt_ids[-1]].text
    assert text.startswith("You attached 3 files. Here is what I can read:")
    assert "an image (image/jpeg," in text and "64×48 px" in text
    assert "**prices.csv** (text/csv, 33 bytes), first lines:" in text and "    apple,3" in text and "plum" not in text
    assert "**scan.pdf** (application/pdf," in text and "1 page(s)" in text


async def test_a_retry_or_edit_with_a_model_that_takes_no_images_is_refused_when_the_history_has_one(
    engine: Engine, upstream: ScriptedUpstream
) -> None:
    image = await engine.files.accept("a.png", _png())
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="ok", chunk_delay=0.0))
    user_id, answer_id = await engine.send(cid, "see", attachments=(image,))
    await answered(engine, cid, upstream)
    before, requests = len(engine.events(cid)), len(upstream.records)
    with pytest.raises(InputRejected, match="does not take images"):
        await engine.retry(cid, answer_id, model=PLAIN)
    with pytest.raises(InputRejected, match="does not take images"):
        await engine.edit(cid, user_id, "again", model=PLAIN)
    assert len(engine.events(cid)) == before and len(upstream.records) == requests
    await engine.edit(cid, user_id, "without the picture", model=PLAIN, attachments=())  # an edit that drops it
    await answered(engine, cid, upstream)
    assert image_hashes(upstream.last) == [] and upstream.last.raw["messages"][-1]["content"] == "without the picture"


async def test_an_animated_gif_keeps_its_frames_and_a_rotated_photo_its_look(engine: Engine) -> None:
    frames = [Image.new("RGB", (12, 8), color) for color in ((255, 0, 0), (0, 255, 0), (0, 0, 255))]
    out = io.BytesIO()
    frames[0].save(out, "GIF", save_all=True, append_images=frames[1:], duration=[50, 60, 70], loop=0, comment=b"hi")
    gif = await engine.files.accept("spin.gif", out.getvalue())
    stored = Image.open(io.BytesIO(engine.files.read(gif.sha256) or b""))
    assert gif.media_type == "image/gif" and stored.n_frames == 3 and "comment" not in stored.info
    exif = Image.Exif()
    exif[0x0112] = 6  # Orientation: rotate 90° clockwise to show
    portrait = io.BytesIO()
    Image.new("RGB", (40, 20), (9, 9, 9)).save(portrait, "JPEG", exif=exif)
    turned = await engine.files.accept("turned.jpg", portrait.getvalue())
    assert (turned.width, turned.height) == (20, 40)
    assert not Image.open(io.BytesIO(engine.files.read(turned.sha256) or b"")).getexif()


def base64_hashes(value: Any) -> set[str]:
    """The sha256 of every long base64 string (or data URL) anywhere in a request body."""
    found: set[str] = set()
    if isinstance(value, dict):
        for item in value.values():
            found |= base64_hashes(item)
    elif isinstance(value, list):
        for item in value:
            found |= base64_hashes(item)
    elif isinstance(value, str) and len(value) > 200:
        with contextlib.suppress(ValueError):
            found.add(hashlib.sha256(base64.b64decode(value.split(",", 1)[-1], validate=True)).hexdigest())
    return found


@pytest.mark.parametrize("dialect", ["anthropic", "gemini"])
async def test_litellm_carries_the_same_image_bytes_in_anthropic_s_and_gemini_s_own_forms(
    dialect: str, tmp_path: Path, upstream: ScriptedUpstream
) -> None:
    from tests.support.dialects import provider

    store = Store.open(tmp_path / "data", flush_interval=0.05)
    files = Files(FolderBlobs(tmp_path / "data" / "blobs"))
    limits = Limits(first_chunk_timeout=5.0, idle_timeout=2.0, resend_backoff=0.05)
    engine = build_engine(
        store, EngineSettings(provider=provider(dialect, upstream, TEST_KEY), limits=limits, files=files)
    )
    try:
        image = await engine.files.accept("holiday.jpg", photo_with_gps())
        cid = engine.create_conversation()
        upstream.plan(Behavior(text="ok", chunk_delay=0.0))
        await engine.send(cid, "what is it?", attachments=(image,))
        await answered(engine, cid, upstream)
        assert upstream.last.dialect == dialect and upstream.last.status in (None, 200)
        assert image.sha256 in base64_hashes(upstream.last.raw)
    finally:
        await engine.shutdown()
        store.close()


async def test_a_very_long_text_file_is_cut_in_the_request_and_kept_whole_in_the_store(
    engine: Engine, upstream: ScriptedUpstream
) -> None:
    from engine.files.content import MAX_TEXT_CHARS

    long = ("x" * 99 + "\n") * (MAX_TEXT_CHARS // 100 + 50)
    notes = await engine.files.accept("long.log", long.encode())
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="ok", chunk_delay=0.0))
    await engine.send(cid, "summarise", attachments=(notes,))
    await answered(engine, cid, upstream)
    sent = sent_parts(upstream.last)[1]["text"]
    assert sent.endswith("[… 5,000 more characters of long.log cut; the whole file is attached]")
    assert engine.files.read(notes.sha256) == long.encode()


async def test_a_stopped_answer_about_a_large_image_records_litellms_own_estimate_of_its_input(
    engine: Engine, upstream: ScriptedUpstream
) -> None:
    noise = Image.frombytes("RGB", (500, 400), os.urandom(500 * 400 * 3))  # about 600 KB as a PNG
    out = io.BytesIO()
    noise.save(out, "PNG")
    attachment = await engine.files.accept("noise.png", out.getvalue())
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="a picture of " + "noise " * 300, chunk_delay=0.02))
    user_id, answer_id = await engine.send(cid, "what is this?", attachments=(attachment,))
    await wait_until(lambda: upstream.records and upstream.records[-1].chunks_sent > 3, 10, "a few words")
    assert await engine.cancel(cid, "user")
    await answered(engine, cid, upstream)
    metrics = engine.conversation(cid).messages[answer_id].metrics
    sent = upstream.last.messages  # the whole request, the image's full data URL in it
    assert len(sent[-1]["content"][1]["image_url"]["url"]) > 100_000
    assert metrics is not None and metrics.input_is_estimated
    assert metrics.input_tokens == litellm().token_counter(model=VISION, messages=sent)
