"""Re-creates the README's waterfall screenshot (docs/waterfall.png): the real app with the demo model, a stopped
answer, its waterfall and replay in the audit panel, in headless Chromium.

.venv/bin/python -m docs.waterfall_screenshot
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from playwright.sync_api import expect, sync_playwright

from tests.support.app_process import CHROMIUM_ARGS, ROOT, AppProcess
from tests.support.browser import send

OUT = ROOT / "docs"


def main() -> None:
    expect.set_options(timeout=30_000)
    with tempfile.TemporaryDirectory() as tmp:
        app = AppProcess(Path(tmp) / "data", None).start()
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1280, "height": 1000})
                page.set_default_timeout(30_000)
                page.goto(app.url)
                send(page, "Explain retries in distributed systems")
                page.wait_for_timeout(2500)
                page.get_by_role("button", name="Stop").click()
                expect(page.locator(".lc-assistant").last).to_have_attribute("data-status", "interrupted")
                page.get_by_role("button", name="Audit panel").click()
                page.get_by_test_id("waterfall-open").last.click()
                view = page.get_by_test_id("waterfall").last
                expect(view.locator("canvas").first).to_be_visible()
                view.get_by_role("button", name="Go to the moment Stop was pressed").click()
                page.wait_for_timeout(600)
                view.scroll_into_view_if_needed()
                view.screenshot(path=OUT / "waterfall.png")
                browser.close()
        finally:
            app.stop()


if __name__ == "__main__":
    main()
