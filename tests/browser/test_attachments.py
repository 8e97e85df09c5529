"""Issue 21 in a real browser: files attached through the file chooser, pasted and dropped; their chips; the image
in the transcript after sending and after a reload, served by the app itself; a script in an SVG runs nothing;
a file over the limit is refused with the limit in the sentence and the typed text stays; Send while an upload
runs waits for it, visibly.

One app for the module (``--max-attachment-mb 1``, the scripted upstream's model declared as taking images with
``--model-info``, and ``openai/text-only``, which takes none), Debian's Chromium via Playwright. Files are made in
the test (images drawn with Pillow).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from playwright.sync_api import Dialog, Page, Route, expect

from tests.support.app_process import AppProcess
from tests.support.big_png import flat_png
from tests.support.browser import PASTE_TEXT, Pages, last_answer, load
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until_playwright

CHIP = ".lc-tray .lc-chip[data-attachment]"
SENT = ".lc-user [data-attachment]"
SVG = b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(2)"><script>alert(1)</script><circle r="9"/></svg>'
SCRIPT_RAN = "window.__ran === true"
DROP = """([b64, name, type, target]) => {
  const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
  const data = new DataTransfer();
  data.items.add(new File([bytes], name, { type }));
  const at = document.querySelector(target);
  at.dispatchEvent(new DragEvent('dragenter', { dataTransfer: data, bubbles: true, cancelable: true }));
  window.__zone = !document.getElementById('lc-drop').hidden;
  at.dispatchEvent(new DragEvent('dragover', { dataTransfer: data, bubbles: true, cancelable: true }));
  at.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
}"""
PASTE_FILE = """([b64, type]) => {
  const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
  const data = new DataTransfer();
  data.items.add(new File([bytes], 'image.png', { type }));
  document.querySelector('.lc-composer textarea')
    .dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
}"""


@pytest.fixture(scope="module")
def model_info(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("model-info") / "models.json"
    path.write_text(json.dumps({"openai/test-model": {"supports_vision": True, "max_input_tokens": 32000}}))
    return path


@pytest.fixture(scope="module")
def app_options(model_info: Path) -> tuple[str, ...]:
    return ("--max-attachment-mb", "1", "--model-info", str(model_info), "--models", "openai/text-only")


@pytest.fixture
def answered(upstream: ScriptedUpstream) -> Iterator[ScriptedUpstream]:
    upstream.plan(Behavior(text="I see it.", chunk_delay=0.005))
    yield upstream


def png(width: int = 200, height: int = 120, colour: tuple[int, int, int] = (200, 40, 40)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(out, "PNG")
    return out.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def choose(page: Page, name: str, media_type: str, data: bytes) -> None:
    """As the file chooser does: set the files of the page's real ``<input type=file>``."""
    page.locator("input.lc-file-input").first.set_input_files([{"name": name, "mimeType": media_type, "buffer": data}])


def chip(page: Page, name: str) -> Any:
    return page.locator(CHIP, has_text=name)


def sha_of(page: Page, app: AppProcess, locator: Any) -> str:
    sha = str(locator.get_attribute("data-attachment"))
    served = page.request.get(f"{app.url}/files/{sha}")
    assert served.ok and hashlib.sha256(served.body()).hexdigest() == sha, "data-attachment is the stored bytes' hash"
    return sha


def test_files_chosen_pasted_and_dropped_show_as_chips_and_the_image_shows_in_the_transcript_after_a_reload(
    page: Page, app: AppProcess, answered: ScriptedUpstream
) -> None:
    with page.expect_file_chooser() as chooser:
        page.get_by_role("button", name="Attach files").click()
    assert chooser.value.is_multiple()
    chooser.value.set_files([{"name": "chart.png", "mimeType": "image/png", "buffer": png()}])
    expect(chip(page, "chart.png")).to_contain_text("PNG image")
    expect(chip(page, "chart.png")).to_contain_text("200×120")
    expect(chip(page, "chart.png").locator("img")).to_have_attribute(
        "src", f"/files/{sha_of(page, app, chip(page, 'chart.png'))}/thumb"
    )

    page.evaluate(PASTE_FILE, [b64(png(64, 64, (0, 160, 0))), "image/png"])
    expect(chip(page, "pasted image.png")).to_contain_text("64×64")

    page.evaluate(DROP, [b64(b"city,people\nOslo,700000\n"), "towns.csv", "text/csv", ".lc-composer textarea"])
    assert page.evaluate("window.__zone"), "the drop zone shows while files are dragged over the page"
    expect(page.locator("#lc-drop")).to_be_hidden()
    expect(chip(page, "towns.csv")).to_contain_text("CSV")
    expect(chip(page, "towns.csv")).to_contain_text("24 bytes")
    page.get_by_role("button", name="Remove towns.csv").click()
    expect(chip(page, "towns.csv")).to_have_count(0)

    box = page.get_by_label("Message")
    box.fill("what is in these pictures?")
    page.get_by_role("button", name="Send").dblclick()
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    expect(page.locator(".lc-user")).to_have_count(1)  # the double click sent once
    expect(page.locator(CHIP)).to_have_count(0)
    sent = page.locator(f"{SENT} img")
    expect(sent).to_have_count(2)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    load(page, page.url)
    expect(sent).to_have_count(2)
    page.wait_for_function("() => [...document.querySelectorAll('.lc-user img')].every(i => i.naturalWidth > 0)")
    images = [u for u in requests if "/files/" in u]
    assert images and all(u.startswith(f"{app.url}/files/") for u in images), "served by the app itself"
    link = page.locator(SENT).first
    assert link.get_attribute("href") == f"/files/{link.get_attribute('data-attachment')}"
    assert link.get_attribute("target") == "_blank"
    assert "image_url" in json.dumps(answered.last.messages), "the images went to the model as image parts"


def test_a_long_paste_is_offered_as_a_file_and_either_choice_works(page: Page) -> None:
    text = "line of pasted text\n" * 400  # 8,000 characters
    page.evaluate(PASTE_TEXT, text)
    ask = page.get_by_role("dialog", name="Attach as a file?")
    expect(ask).to_contain_text("8,000 characters")
    ask.get_by_role("button", name="Paste as text").click()
    expect(ask).to_have_count(0)
    assert page.get_by_label("Message").input_value() == text
    page.get_by_label("Message").fill("kept")
    page.evaluate(PASTE_TEXT, text)
    page.get_by_role("dialog", name="Attach as a file?").get_by_role("button", name="Attach as a file").click()
    expect(chip(page, "pasted text.txt")).to_contain_text("text · 7.8 KB")
    assert page.get_by_label("Message").input_value() == "kept"


def test_a_file_over_the_limit_is_refused_with_the_limit_and_the_typed_text_stays(page: Page) -> None:
    box = page.get_by_label("Message")
    box.fill("my long question")
    choose(page, "huge.bin", "application/octet-stream", b"\0" * (1536 * 1024))
    expect(page.locator(".q-notification")).to_contain_text("huge.bin is 1.5 MB; the limit is 1 MB per file")
    expect(page.locator(CHIP)).to_have_count(0)
    assert box.input_value() == "my long question"


def test_an_svg_with_a_script_is_a_download_and_runs_nothing(page: Page, app: AppProcess, answered: Any) -> None:
    dialogs: list[str] = []

    def dialog(d: Dialog) -> None:
        dialogs.append(d.message)
        d.dismiss()

    page.on("dialog", dialog)
    page.locator("input.lc-file-input").set_input_files(
        [{"name": "evil.svg", "mimeType": "image/svg+xml", "buffer": SVG}]
    )
    expect(chip(page, "evil.svg")).to_contain_text("SVG image")
    expect(chip(page, "evil.svg").locator("img")).to_have_count(0)
    page.get_by_label("Message").fill("look")
    page.get_by_label("Message").press("Enter")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    link = page.locator(SENT, has_text="evil.svg")
    assert link.get_attribute("download") == "evil.svg"
    assert page.locator(".lc-user img, .lc-user object, .lc-user iframe, .lc-user embed").count() == 0
    with page.expect_download() as download:
        link.click()
    assert Path(download.value.path()).read_bytes() == SVG
    sha = str(link.get_attribute("data-attachment"))
    served = page.request.get(f"{app.url}/files/{sha}")
    assert served.headers["content-type"] == "application/octet-stream"
    assert served.headers["content-disposition"].startswith("attachment;")
    assert dialogs == [], "no script of the SVG ran"


def test_send_while_an_upload_runs_waits_for_it_visibly_pressed_again_cancels_and_otherwise_sends_with_the_file(
    page: Page, answered: ScriptedUpstream
) -> None:
    held: list[Route] = []
    page.route("**/files", lambda route: held.append(route))
    box = page.get_by_label("Message")
    waiting = page.get_by_role("button", name="Waiting for the upload; press to cancel it")

    def attach_and_send(name: str, text: str) -> None:
        choose(page, name, "image/png", png())
        expect(page.get_by_label(f"Uploading {name}")).to_be_visible()
        box.fill(text)
        box.press("Enter")
        expect(waiting).to_be_visible()
        expect(waiting).to_contain_text("Waiting for the upload")
        assert box.input_value() == text

    attach_and_send("cancelled.png", "never mind")
    waiting.click()
    expect(page.get_by_label("Uploading cancelled.png")).to_have_count(0)
    expect(page.get_by_role("button", name="Send")).to_be_visible()
    assert box.input_value() == "never mind" and page.locator(CHIP).count() == 0
    expect(page.locator(".lc-user")).to_have_count(0)

    attach_and_send("late.png", "with the late file")
    wait_until_playwright(page, lambda: len(held) >= 2, what="the second upload's request reaching the route")
    held[1].continue_()
    expect(page.locator(f"{SENT} img")).to_have_count(1)
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    assert box.input_value() == ""


def test_a_model_that_takes_no_images_refuses_the_send_and_the_draft_keeps_its_text_and_chips(
    page: Page, upstream: ScriptedUpstream
) -> None:
    page.get_by_label("Model for the next answer").click()
    page.get_by_role("option", name="openai/text-only").click()
    choose(page, "photo.png", "image/png", png())
    expect(chip(page, "photo.png")).to_be_visible()
    box = page.get_by_label("Message")
    box.fill("describe it")
    box.press("Enter")
    expect(page.locator(".q-notification")).to_contain_text("does not take images (photo.png)")
    assert box.input_value() == "describe it"
    expect(chip(page, "photo.png")).to_be_visible()
    expect(page.locator(".lc-user")).to_have_count(0)
    assert not upstream.records, "nothing went to the model"


def test_an_edit_removes_one_file_and_adds_another(page: Page, answered: ScriptedUpstream) -> None:
    choose(page, "first.png", "image/png", png())
    expect(chip(page, "first.png")).to_be_visible()
    page.get_by_label("Message").fill("version one")
    page.get_by_label("Message").press("Enter")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    answered.plan(Behavior(text="Edited.", chunk_delay=0.005))
    message = page.locator(".lc-user").first
    message.get_by_role("button", name="Edit").click()
    expect(message.locator(CHIP, has_text="first.png")).to_be_visible()
    message.get_by_role("button", name="Remove first.png").click()
    message.locator("input.lc-file-input").set_input_files(
        [{"name": "second.csv", "mimeType": "text/csv", "buffer": b"a,b\n1,2\n"}]
    )
    expect(message.locator(CHIP, has_text="second.csv")).to_be_visible()
    message.get_by_role("button", name="Save").click()
    edited = page.locator(".lc-user").first
    expect(edited).to_have_attribute("data-version", "2/2")
    expect(edited.locator("[data-attachment]")).to_have_count(1)
    expect(edited.locator("[data-attachment]")).to_contain_text("second.csv")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")


def test_pages_open_with_the_limits_from_the_server(open_page: Pages, app: AppProcess) -> None:
    page = open_page(app)
    tray = page.locator(".lc-tray[data-lc-main-tray]")
    assert tray.get_attribute("data-max-file-bytes") == str(1024 * 1024)
    assert int(tray.get_attribute("data-max-files") or 0) >= 1


def test_images_waiting_to_be_read_say_so_on_their_chips_and_all_arrive(page: Page) -> None:
    scans = [
        {"name": f"scan{n}.png", "mimeType": "image/png", "buffer": flat_png(4000 + n, 4000, channels=3, bits=16)}
        for n in range(4)
    ]  # 96 MB decoded each: two are read at a time, the others wait
    page.locator("input.lc-file-input").first.set_input_files(scans)
    expect(page.locator(".lc-chip-uploading", has_text="waiting:").first).to_be_visible(timeout=20_000)
    for n in range(4):
        expect(chip(page, f"scan{n}.png")).to_be_visible(timeout=60_000)
    expect(page.locator(".lc-chip-uploading")).to_have_count(0)


def test_each_chip_says_what_the_model_will_receive_and_a_file_it_cannot_read_is_announced(
    page: Page, upstream: ScriptedUpstream
) -> None:
    said = lambda name: chip(page, name).locator(".lc-chip-delivery")  # noqa: E731
    choose(page, "notes.txt", "text/plain", b"plain words\n")
    expect(said("notes.txt")).to_have_text("the model reads it as text")
    choose(page, "garbage.txt", "text/plain", bytes(range(256)) * 16)  # named as text, bytes that are not
    expect(said("garbage.txt")).to_have_text("the model cannot read it: only its name and size are sent")
    expect(page.locator(".q-notification")).to_contain_text("garbage.txt: the model cannot read this file")
    choose(page, "photo.png", "image/png", png())
    expect(said("photo.png")).to_have_text("the model sees the image")
    expect(said("garbage.txt")).to_have_class(re.compile("lc-chip-warn"))
    expect(said("notes.txt")).not_to_have_class(re.compile("lc-chip-warn"))
    page.get_by_label("Model for the next answer").click()
    page.get_by_role("option", name="openai/text-only").click()  # the chips say it again for this model
    expect(said("photo.png")).to_have_text("this model does not take images: Send will refuse it")
    expect(said("notes.txt")).to_have_text("the model reads it as text")
    chip(page, "photo.png").get_by_role("button", name="Remove photo.png").click()
    upstream.plan(Behavior(text="Read it."))
    page.get_by_label("Message").fill("what is in these?")
    page.get_by_label("Message").press("Enter")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    sent = upstream.last.messages[-1]["content"]  # what the chips said is what went
    assert "plain words" in sent[1]["text"] and "cannot be shown here" in sent[2]["text"], sent


def test_a_paste_too_long_for_a_message_says_the_limit_at_once_and_can_only_be_attached(page: Page) -> None:
    text = "x" * 199_999 + "\n"  # 200,000 characters: over the message's 32,000
    page.evaluate(PASTE_TEXT, text)
    ask = page.get_by_role("dialog", name="Attach as a file?")
    expect(ask).to_contain_text("200,000 characters long; a message holds at most 32,000")
    expect(ask.get_by_role("button", name="Paste as text")).to_be_disabled()
    ask.get_by_role("button", name="Attach as a file").click()
    expect(chip(page, "pasted text.txt")).to_be_visible()
    assert page.get_by_label("Message").input_value() == ""
    box = page.get_by_label("Message")
    box.fill("y " * 16_500)  # typed (or pasted under the offer's size) past the limit: said under the box at once
    expect(page.get_by_text("33,000 characters: a message holds at most 32,000")).to_be_visible()
    height = box.evaluate("b => b.getBoundingClientRect().height")
    assert height <= 200, f"the box grew to {height} px"
    box.fill("short again")
    expect(page.get_by_text("a message holds at most 32,000")).not_to_be_visible()


def test_an_open_edits_chips_say_again_what_the_model_gets_when_another_model_is_picked(
    page: Page, upstream: ScriptedUpstream
) -> None:
    choose(page, "photo.png", "image/png", png())
    expect(chip(page, "photo.png")).to_be_visible()
    upstream.plan(Behavior(text="A photo."))
    page.get_by_label("Message").fill("what is this?")
    page.get_by_label("Message").press("Enter")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    asked = page.locator(".lc-user").last
    asked.get_by_role("button", name="Edit").click()
    said = asked.locator(CHIP, has_text="photo.png").locator(".lc-chip-delivery")
    expect(said).to_have_text("the model sees the image")
    page.get_by_label("Model for the next answer").click()
    page.get_by_role("option", name="openai/text-only").click()
    expect(said).to_have_text("this model does not take images: Send will refuse it")
    page.get_by_label("Model for the next answer").click()
    page.get_by_role("option", name="openai/test-model").click()
    expect(said).to_have_text("the model sees the image")


def test_the_chat_still_follows_when_an_image_loads_after_the_answer_ended(
    page: Page, upstream: ScriptedUpstream
) -> None:
    upstream.plan(Behavior(text="A long answer fills the page. " * 200, chunk_delay=0.0))
    page.get_by_label("Message").fill("fill the page")
    page.get_by_label("Message").press("Enter")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    held: list[Route] = []
    page.route(
        re.compile(r".*/files/[0-9a-f]{64}/thumb$"), lambda route: held.append(route)
    )  # the picture waits (chip and message)
    choose(page, "tall.png", "image/png", png(200, 900))
    expect(chip(page, "tall.png")).to_be_visible()
    upstream.plan(Behavior(text="A tall picture.", chunk_delay=0.0))
    page.get_by_label("Message").fill("look")
    page.get_by_label("Message").press("Enter")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    wait_until_playwright(page, lambda: bool(held), what="the image's request")
    at_bottom = "() => innerHeight + scrollY >= document.documentElement.scrollHeight - 80"
    page.wait_for_function(at_bottom)  # the answer ended with the reader at the bottom
    for route in held:
        route.continue_()
    page.wait_for_function("() => [...document.querySelectorAll('.lc-user img')].every(i => i.naturalHeight > 0)")
    page.wait_for_function(at_bottom)  # and the image that came later did not leave the reader above it
