"""Re-creates the README screenshots: the real app with the demo model, in headless Chromium.

.venv/bin/python -m docs.make_screenshots          # all of them
.venv/bin/python -m docs.make_screenshots files    # only docs/files.png (attachments)
.venv/bin/python -m docs.make_screenshots question # only docs/question.png (a tool's question)
.venv/bin/python -m docs.make_screenshots compaction  # only docs/compaction.png (a 1,500-token window)
.venv/bin/python -m docs.make_screenshots approval # only docs/approval.png (a tool waiting for approval)
.venv/bin/python -m docs.make_screenshots presets  # only docs/presets.png (an agent preset, a stopped answer's cost)
"""

from __future__ import annotations

import io
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw
from playwright.sync_api import expect, sync_playwright

from tests.support.app_process import CHROMIUM_ARGS, ROOT, AppProcess
from tests.support.browser import send

OUT = ROOT / "docs"


def chart() -> bytes:
    """A small bar chart, drawn with Pillow."""
    image = Image.new("RGB", (480, 300), "white")
    draw = ImageDraw.Draw(image)
    for n, height in enumerate((120, 200, 90, 240, 170)):
        draw.rectangle((40 + n * 85, 270 - height, 100 + n * 85, 270), fill=(29, 78, 216))
    draw.line((30, 270, 460, 270), fill="black", width=2)
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def files_shot(browser: Any, url: str) -> None:
    """docs/files.png: a sent message with an image and a CSV, and a draft with a chip waiting to be sent."""
    page = browser.new_page(viewport={"width": 1280, "height": 860})
    page.set_default_timeout(30_000)
    page.goto(url)
    page.wait_for_function("() => window.did_handshake === true")
    files = [
        {"name": "sales-chart.png", "mimeType": "image/png", "buffer": chart()},
        {"name": "sales.csv", "mimeType": "text/csv", "buffer": b"month,sales\nJan,120\nFeb,200\nMar,90\n"},
    ]
    page.locator("input.lc-file-input").set_input_files(files)
    expect(page.locator(".lc-tray .lc-chip[data-attachment]")).to_have_count(2)
    send(page, "What is in these files?")
    expect(page.locator(".lc-assistant").last).to_have_attribute("data-status", "complete")
    page.locator("input.lc-file-input").set_input_files(
        [{"name": "notes.md", "mimeType": "text/markdown", "buffer": b"# Notes\n\nQ2 looks better.\n"}]
    )
    expect(page.locator(".lc-tray .lc-chip[data-attachment]")).to_have_count(1)
    page.get_by_label("Message").fill("And compare with my notes")
    page.wait_for_timeout(600)
    page.screenshot(path=OUT / "files.png")
    page.close()


def question_shot(browser: Any, url: str) -> None:
    """docs/question.png: a tool asks a question (MCP elicitation); the form in its card, partly filled in."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(30_000)
    page.goto(url)
    page.wait_for_function("() => window.did_handshake === true")
    send(page, "Order a mug for my colleague #order")
    form = page.locator("[data-question=waiting]")
    expect(form).to_be_visible()
    form.get_by_role("textbox", name="Name").fill("Ada")
    form.get_by_role("spinbutton", name="Quantity").fill("0")
    form.get_by_role("radio", name="M").click()
    form.get_by_role("button", name="Submit").click()
    expect(form.get_by_role("alert")).to_contain_text("at least 1")
    page.wait_for_timeout(2500)
    page.screenshot(path=OUT / "question.png")
    page.close()


def compaction_shot(browser: Any, tmp: Path) -> None:
    """docs/compaction.png: the demo model with a 1,500-token window (``--model-info``): the meter, a compaction
    the Compact button forced, its summary open, and the answer after it."""
    info = tmp / "models.json"
    info.write_text(json.dumps({"openai/ledger-demo": {"max_input_tokens": 1500}}))
    app = AppProcess(tmp / "small", None, "--model-info", str(info)).start()
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 860})
        page.set_default_timeout(30_000)
        page.goto(app.url)
        for question in ("Explain retries in distributed systems", "Now tell me about caching"):
            send(page, question)
            expect(page.locator(".lc-assistant").last).to_have_attribute("data-status", "complete")
        page.get_by_role("button", name="Compact: summarize earlier turns").click()
        expect(page.locator(".lc-compaction")).to_have_attribute("data-status", "complete")
        send(page, "And idempotency keys")
        expect(page.locator(".lc-assistant").last).to_have_attribute("data-status", "complete")
        page.locator(".lc-compaction").get_by_text("Summary", exact=True).click()
        page.locator(".lc-compaction").scroll_into_view_if_needed()
        page.wait_for_timeout(800)
        page.screenshot(path=OUT / "compaction.png")
        page.close()
    finally:
        app.stop()


def approval_shot(browser: Any, url: str) -> None:
    """docs/approval.png: a destructive demo tool (#delete) waiting for Run, Skip or Always allow."""
    page = browser.new_page(viewport={"width": 1280, "height": 860})
    page.set_default_timeout(30_000)
    page.goto(url)
    page.wait_for_function("() => window.did_handshake === true")
    send(page, "The caching note is outdated, delete it #delete")
    expect(page.locator("[data-tool-status=waiting]")).to_contain_text("delete_note")
    page.wait_for_timeout(3200)  # the card counts the seconds it has waited
    page.screenshot(path=OUT / "approval.png")
    page.close()


def presets_shot(browser: Any, tmp: Path) -> None:
    """docs/presets.png: a chat with the preset Ada (the demo answers in French as Ada), a stopped answer with its
    cost (the demo model priced by ``--model-info``), the chat's cost in the header."""
    prices = Path(tmp) / "prices.json"
    prices.write_text('{"openai/ledger-demo": {"input_cost_per_token": 3e-6, "output_cost_per_token": 1.5e-5}}')
    app = AppProcess(Path(tmp) / "presets-data", None, "--model-info", str(prices)).start()
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 860})
        page.set_default_timeout(30_000)
        page.goto(app.url + "/presets")
        page.wait_for_function("() => window.did_handshake === true")
        page.get_by_role("button", name="New preset").click()
        expect(page.get_by_label("Name")).to_have_value("")  # the new, empty form replaced the default's
        page.get_by_label("Name").fill("Ada")
        page.get_by_label("Instructions").fill("You are Ada. Answer in French.")
        page.get_by_role("button", name="Save the preset").click()
        page.get_by_role("button", name="Start a chat with this preset").click()
        send(page, "Explain caching")
        expect(page.locator(".lc-assistant").last).to_have_attribute("data-status", "complete")
        send(page, "And retries, in more detail")
        page.wait_for_timeout(1500)
        page.get_by_role("button", name="Stop").click()
        expect(page.locator(".lc-assistant").last).to_have_attribute("data-status", "interrupted")
        page.wait_for_timeout(500)
        page.screenshot(path=OUT / "presets.png")
        page.close()
    finally:
        app.stop()


def main() -> None:
    expect.set_options(timeout=30_000)
    only = sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        app = AppProcess(Path(tmp) / "data", None, "--models", "openai/gpt-4o-mini").start()
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
                if not only or "files" in only:
                    files_shot(browser, app.url)
                if not only or "question" in only:
                    question_shot(browser, app.url)
                if not only or "compaction" in only:
                    compaction_shot(browser, Path(tmp))
                if not only or "presets" in only:
                    presets_shot(browser, Path(tmp))
                if not only or "approval" in only:
                    approval_shot(browser, app.url)
                if only:
                    browser.close()
                    return
                page = browser.new_page(viewport={"width": 1280, "height": 860})
                page.set_default_timeout(30_000)
                page.goto(app.url)
                send(page, "Explain retries in distributed systems")
                expect(page.locator(".lc-assistant").last).to_have_attribute("data-status", "complete")
                send(page, "Now tell me about caching #drop")
                expect(page.locator(".lc-assistant").last).to_have_attribute("data-status", "failed")
                send(page, "And idempotency keys")
                page.wait_for_timeout(1500)
                page.get_by_role("button", name="Stop").click()
                expect(page.locator(".lc-assistant").last).to_have_attribute("data-status", "interrupted")
                page.wait_for_timeout(300)
                page.screenshot(path=OUT / "light.png")
                page.get_by_role("button", name="Audit panel").click()
                page.wait_for_timeout(600)
                page.screenshot(path=OUT / "audit.png")
                page.get_by_role("button", name="Audit panel").click()
                page.get_by_role("button", name="Switch between light and dark").click()
                page.wait_for_timeout(400)
                page.screenshot(path=OUT / "dark.png")
                tools = browser.new_page(viewport={"width": 1280, "height": 860})
                tools.set_default_timeout(30_000)
                tools.goto(app.url)
                send(tools, "What time is it?")
                expect(tools.locator(".lc-assistant").last).to_have_attribute("data-status", "complete")
                send(tools, "Look up my notes on retries #tools")
                expect(tools.locator("[data-tool-status=running]").last).to_contain_text("slow_task")
                tools.wait_for_timeout(1500)
                tools.get_by_role("button", name="Stop").click()
                expect(tools.locator(".lc-assistant").last).to_have_attribute("data-status", "interrupted")
                tools.locator(".lc-tool-card").last.get_by_text("Result").click()
                tools.wait_for_timeout(400)
                tools.screenshot(path=OUT / "tools.png")
                edits = browser.new_page(viewport={"width": 1280, "height": 760})
                edits.set_default_timeout(30_000)
                edits.goto(app.url)
                send(edits, "Explain caching in two sentences")
                expect(edits.locator(".lc-assistant").last).to_have_attribute("data-status", "complete")
                first = edits.locator(".lc-user").first
                first.get_by_role("button", name="Edit").click()
                first.get_by_label("Edit message").fill("Explain caching for a five-year-old")
                first.get_by_role("button", name="Save").click()
                expect(edits.locator(".lc-user").first).to_have_attribute("data-version", "2/2")
                expect(edits.locator(".lc-assistant").last).to_have_attribute("data-status", "complete")
                edits.wait_for_timeout(600)
                edits.screenshot(path=OUT / "branch.png")
                page.keyboard.press("Control+k")
                page.get_by_label("Search chats", exact=True).fill("idempotency")
                page.wait_for_timeout(700)
                page.screenshot(path=OUT / "search.png")
                page.keyboard.press("Escape")
                page.get_by_label("Model for the next answer").click()
                page.wait_for_timeout(500)
                page.screenshot(path=OUT / "models.png")
                page.keyboard.press("Escape")
                phone = browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=2)
                phone.goto(page.url)
                phone.wait_for_timeout(800)
                phone.screenshot(path=OUT / "phone.png")
                browser.close()
        finally:
            app.stop()


if __name__ == "__main__":
    main()
