"""Notices in real Chromium, on a desktop and on a touch phone: two different refusals at once are two notices, each
reason readable whole, and no notice lies over the header's title or model picker."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.app_process import AppProcess
from tests.support.browser import Pages

SCREENS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844, "touch": True}}
BIG = b"\0" * (1024 * 1024 + 512 * 1024)  # 1.5 MB, over the module's 1 MB per file


@pytest.fixture(scope="module")
def app_options() -> tuple[str, ...]:
    return ("--max-attachment-mb", "1")


def header_bottom(page: Page) -> float:
    box = page.locator(".q-header").bounding_box()
    assert box is not None
    return box["y"] + box["height"]


@pytest.mark.parametrize("screen", ["desktop", "phone"])
def test_two_refused_files_show_both_reasons_whole_below_the_header(
    open_page: Pages, app: AppProcess, screen: str
) -> None:
    page = open_page(app, **SCREENS[screen])
    page.locator("input.lc-file-input").first.set_input_files(
        [
            {"name": "first.bin", "mimeType": "application/octet-stream", "buffer": BIG},
            {"name": "second.bin", "mimeType": "application/octet-stream", "buffer": BIG},
        ]
    )
    notices = page.locator(".q-notification")
    expect(notices.filter(has_text="first.bin is 1.5 MB; the limit is 1 MB per file")).to_be_visible()
    expect(notices.filter(has_text="second.bin is 1.5 MB; the limit is 1 MB per file")).to_be_visible()
    expect(page.locator(".q-notification__badge")).to_have_count(0)  # no count standing for a hidden reason
    page.wait_for_function(  # once they came to rest (they slide in): every notice below the header
        """bottom => [...document.querySelectorAll('.q-notification')]
             .every(n => n.getBoundingClientRect().top >= bottom - 1)""",
        arg=header_bottom(page),
        timeout=3000,
    )


def test_the_same_notice_twice_is_one_notice_with_its_count(open_page: Pages, app: AppProcess) -> None:
    page = open_page(app, **SCREENS["desktop"])
    again = {"name": "again.bin", "mimeType": "application/octet-stream", "buffer": BIG}
    page.locator("input.lc-file-input").first.set_input_files([again, again])  # the same reason twice
    notices = page.locator(".q-notification")
    expect(notices).to_have_count(1)
    expect(notices.locator(".q-notification__badge")).to_have_text("2")
