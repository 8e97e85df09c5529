"""The chat surface in a real browser at phone and desktop sizes: layout, scrolling, finding, choosing a model,
theme, and an automated accessibility check (axe-core, pinned through the axe-playwright-python package)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.support.accessibility import axe_problems, switch_theme
from tests.support.app_process import AppProcess
from tests.support.browser import Pages, answered, last_answer, send
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until_blocking

PHONE, DESKTOP = (390, 844), (1280, 800)
CODE = "```python\n" + "value = " + " + ".join(f"item_{n}" for n in range(80)) + "\n```"
URL = "https://example.invalid/" + "a" * 300
TABLE = (
    "| "
    + " | ".join(f"column {n}" for n in range(14))
    + " |\n|"
    + "---|" * 14
    + "\n| "
    + " | ".join(f"value {n}" for n in range(14))
    + " |"
)
WIDE = f"Here is code:\n\n{CODE}\n\nA link: {URL}\n\n{TABLE}\n\nDone."
LONG = "\n\n".join(f"Paragraph {n}: " + "words " * 60 for n in range(12))


@pytest.fixture(scope="module")
def app_options() -> tuple[str, ...]:
    return ("--models", "openai/other-model")


def open_at(open_page: Pages, app: AppProcess, size: tuple[int, int]) -> Page:
    """The page at ``size``; the phone size is a touch phone (touch events, no hover)."""
    return open_page(app, width=size[0], height=size[1], touch=size == PHONE)


def no_sideways_scroll(page: Page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert width <= 0, f"the page is {width} px wider than the window"


@pytest.mark.parametrize("size", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_code_long_urls_and_wide_tables_never_widen_the_page(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream, size: tuple[int, int]
) -> None:
    page = open_at(open_page, app, size)
    answered(page, upstream, "x" * 400, WIDE)
    no_sideways_scroll(page)
    box = page.get_by_role("button", name="Send").bounding_box()
    assert box is not None and box["x"] + box["width"] <= size[0], "Send is off-screen"


@pytest.mark.parametrize("size", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_the_message_box_stops_growing_at_a_third_of_the_window(
    open_page: Pages, app: AppProcess, size: tuple[int, int]
) -> None:
    page = open_at(open_page, app, size)
    page.get_by_label("Message").fill("\n".join(f"line {n}" for n in range(200)))
    sizes = page.evaluate(
        "(() => { const t = document.querySelector('.lc-composer textarea');"
        " return [t.getBoundingClientRect().height, t.scrollHeight, window.innerHeight]; })()"
    )
    height, content, window = sizes
    assert height <= window * 0.36 and content > height


def test_sending_while_scrolled_up_brings_the_new_message_into_view_and_jump_shows_the_latest(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    page = open_at(open_page, app, DESKTOP)
    for n in range(3):
        answered(page, upstream, f"question {n}", LONG)
    jump = page.get_by_role("button", name="Jump to latest")

    def jumped_from_the_top() -> bool:
        """Scrolled up (again, while the page may still be following the last answer down: in fresh run 79 the
        button showed and was gone for good before the click reached it), the jump button shows and is pressed."""
        page.evaluate("window.scrollTo(0, 0)")
        try:
            jump.click(timeout=2_000)
        except PlaywrightTimeoutError:
            return False
        return True

    wait_until_blocking(jumped_from_the_top, 20, "Jump to latest shown and pressed")
    page.wait_for_function("window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 90")
    expect(jump).to_be_hidden()
    page.evaluate("window.scrollTo(0, 0)")
    upstream.plan(Behavior(text=LONG, chunk_delay=0.01))
    send(page, "the newest question")
    expect(page.locator(".lc-user").last).to_be_in_viewport()


GROW_AFTER_FOLLOWING = """() => new Promise((done) => {
  const grower = document.createElement('div');
  document.querySelector('.lc-assistant:last-of-type, .lc-assistant').appendChild(grower);  // a mutation: followed
  setTimeout(() => { grower.style.height = '1500px'; done(); });  // grown before that scroll's event, no mutation
})"""
AT_BOTTOM = "() => innerHeight + scrollY >= document.documentElement.scrollHeight - 80"


def test_the_chat_follows_a_page_that_grows_without_a_new_element_right_after_it_scrolled_down(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    page = open_at(open_page, app, DESKTOP)
    answered(page, upstream, "a long answer", LONG)
    page.wait_for_function(AT_BOTTOM)
    for _ in range(3):  # as an image or a late style grows the page right after the chat scrolled to its bottom
        page.evaluate(GROW_AFTER_FOLLOWING)
        page.wait_for_function(AT_BOTTOM)  # still followed: the reader never scrolled
    expect(page.get_by_role("button", name="Jump to latest")).to_be_hidden()


def test_search_finds_a_word_that_appears_only_inside_an_answer(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    page = open_at(open_page, app, DESKTOP)
    answered(page, upstream, "tell me about animals", "The rare zebracorn lives in the north.")
    page.keyboard.press("Control+k")
    box = page.get_by_label("Search chats", exact=True)
    expect(box).to_be_visible()
    box.fill("zebracorn")
    hit = page.locator("[data-testid=search-hit], .q-dialog .q-btn").filter(has_text="zebracorn").first
    expect(hit).to_contain_text("The rare zebracorn lives in the north.")
    cid = page.url.rsplit("/", 1)[-1]
    page.goto(app.url)
    page.keyboard.press("Control+k")
    page.get_by_label("Search chats", exact=True).fill("zebracorn")
    expect(page.locator(".q-dialog").filter(has_text="zebracorn").first).to_be_visible()
    page.get_by_label("Search chats", exact=True).press("Enter")
    page.wait_for_url(f"**/chat/{cid}")


def test_the_model_picker_chooses_the_model_of_the_next_answer_and_each_answer_names_its_model(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    page = open_at(open_page, app, DESKTOP)
    answered(page, upstream, "first", "from the default model")
    assert upstream.last.model == "test-model"
    expect(last_answer(page)).to_contain_text("openai/test-model")
    page.get_by_label("Model for the next answer").click()
    page.get_by_role("option", name="openai/other-model").click()
    answered(page, upstream, "second", "from the other model")
    assert upstream.last.model == "other-model"
    expect(last_answer(page)).to_contain_text("openai/other-model")


def test_the_chosen_theme_survives_a_reload(open_page: Pages, app: AppProcess) -> None:
    page = open_at(open_page, app, DESKTOP)
    dark = page.evaluate("document.body.classList.contains('body--dark')")
    page.get_by_role("button", name="Switch between light and dark").click()
    page.wait_for_function("d => document.body.classList.contains('body--dark') !== d", arg=dark)
    page.reload()
    expect(page.get_by_label("Message")).to_be_visible()
    page.wait_for_function("d => document.body.classList.contains('body--dark') !== d", arg=dark)


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_no_serious_accessibility_problems_on_the_empty_page_an_answer_an_error_and_the_audit_panel_in_both_themes(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream, size: tuple[int, int]
) -> None:
    page = open_at(open_page, app, size)
    for theme in ("first", "other"):
        assert axe_problems(page) == [], f"empty page, {theme} theme"
        answered(page, upstream, "hello", "Hello! **Bold** and `code`.\n\n- one\n- two")
        assert axe_problems(page) == [], f"an answer, {theme} theme"
        upstream.plan(Behavior(status=401))
        send(page, "fail please")
        expect(last_answer(page)).to_have_attribute("data-status", "failed")
        assert axe_problems(page) == [], f"an error, {theme} theme"
        page.get_by_role("button", name="Audit panel").click()
        expect(page.locator(".lc-audit-card").first).to_be_visible()
        assert axe_problems(page) == [], f"the audit panel, {theme} theme"
        page.get_by_role("button", name="Close audit panel").click()
        expect(page.locator(".lc-audit-drawer")).not_to_be_in_viewport()
        if theme == "first":
            switch_theme(page)
            if size == PHONE:  # the list is a closed drawer there
                page.get_by_role("button", name="Chats").click()
            page.get_by_role("button", name="New chat").click()
            page.wait_for_url(app.url + "/")
            expect(page.locator(".lc-assistant")).to_have_count(0)
