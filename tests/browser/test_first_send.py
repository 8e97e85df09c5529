"""The first Send, as a newcomer makes it, in real Chromium on a desktop and on a touch phone: the message shows at
once and says what it waits for while the model client loads, a second press where Send was never stops the
answer, and a second Enter made before the first one's result reached the page sends nothing more."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support.app_process import READY_LINE, AppProcess
from tests.support.app_runner import AppRunner
from tests.support.browser import Pages, last_answer, load
from tests.support.latency_proxy import LatencyProxy
from tests.support.upstream import Behavior, ScriptedUpstream

SCREENS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844, "touch": True}}
AT_ONCE_MS = 1500  # "at once" on a busy machine: the model client's import takes 4-7 s and more meanwhile
LOADED_MS = 60_000  # the model client loads (4 s longer here) and the demo answers, on a busy machine
SECOND_PRESS_MS = 400  # a double press on what had become Stop (the guard is 0.6 s: ui.composer.STOP_GUARD_SECONDS)
SLOW_CLIENT = Path(__file__).parents[1] / "support" / "slow_client"  # litellm's import 4 s longer, as when busy
ROOT = Path(__file__).parents[2]


def centre(page: Page, name: str) -> tuple[float, float]:
    box = page.get_by_role("button", name=name, exact=True).bounding_box()
    assert box is not None
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


PRESS_ON_STOP = """([x, y, after]) => {
  // the moment the button comes to read Stop, and 'after' ms later: a click at (x, y), on whatever lies there
  window.lcPresses = [];
  const click = () => {
    document.elementFromPoint(x, y)?.dispatchEvent(new MouseEvent('click', { bubbles: true, clientX: x, clientY: y }));
    window.lcPresses.push(document.querySelector('[data-lc-send] .block')?.textContent?.trim());
  };
  const watch = new MutationObserver(() => {
    if (document.querySelector('[data-lc-send] .block')?.textContent?.trim() !== 'Stop') return;
    watch.disconnect();
    setTimeout(click, 0);
    setTimeout(click, after);
  });
  watch.observe(document.querySelector('.lc-footer'), { subtree: true, childList: true, characterData: true });
}"""


def press(page: Page, at: tuple[float, float], touch: bool) -> None:
    """A finger or a mouse at ``at``, whatever lies there now (a person presses a place, not an element)."""
    if touch:
        page.touchscreen.tap(*at)
    else:
        page.mouse.click(*at)


@pytest.fixture
def cold_app(run_app: AppRunner) -> Iterator[AppProcess]:
    """The app started as on a fresh clone of a busy machine: it serves pages while litellm is being imported."""
    slow = {"PYTHONPATH": f"{SLOW_CLIENT}:{ROOT}", "LC_TEST_LITELLM_DELAY": "4"}
    # the tour's demo model: a real model's start-up checks it with litellm before serving the first page
    process = run_app.made("--demo-chunk-delay", "0.03", cold=True, env=slow, demo_model=True)
    try:
        yield process.start(120, loaded=False)
    finally:
        run_app.stop(process)


@pytest.mark.parametrize("screen", ["desktop", "phone"])
def test_the_first_send_shows_the_message_at_once_says_what_it_waits_for_and_a_second_press_never_stops_it(
    open_page: Pages, cold_app: AppProcess, screen: str
) -> None:
    touch = screen == "phone"
    page = open_page(cold_app, timeout_ms=60_000, **SCREENS[screen])
    page.get_by_label("Message").fill("the very first question")
    send_at = centre(page, "Send")
    assert READY_LINE not in cold_app.log.read_text(), "the model client loaded before the test could send: no test"
    page.evaluate(PRESS_ON_STOP, [*send_at, SECOND_PRESS_MS])  # the presses made on the view before
    press(page, send_at, touch)
    pending = page.locator(".lc-sending")
    expect(pending).to_contain_text("the very first question", timeout=AT_ONCE_MS)
    expect(pending).to_contain_text("loading the model client")
    expect(page.get_by_text("Ask anything.")).to_be_hidden()
    page.screenshot(path=f"/tmp/first_send_{screen}.png")  # the first-Send moment, for the closing note
    press(page, send_at, touch)  # the second press of a double click: nothing
    stop = page.get_by_role("button", name="Stop")
    expect(stop).to_be_visible(timeout=LOADED_MS)  # the answer streams: Send became Stop
    page.wait_for_function("() => window.lcPresses.length === 2")  # at once and 0.4 s later, both on Stop
    expect(last_answer(page)).to_have_attribute("data-status", "complete", timeout=LOADED_MS)  # never stopped
    assert page.evaluate("window.lcPresses") == ["Stop", "Stop"]
    expect(page.locator(".lc-user")).to_have_count(1)
    expect(page.locator(".lc-assistant")).to_have_count(1)
    expect(pending).to_be_hidden()
    page.get_by_label("Message").fill("and a second one #long")
    page.get_by_label("Message").press("Enter")
    stop.click()  # armed once it has shown a moment: a deliberate Stop stops
    expect(last_answer(page)).to_have_attribute("data-status", "interrupted", timeout=LOADED_MS)


@pytest.fixture
def slower(app: AppProcess) -> Iterator[LatencyProxy]:
    proxy = LatencyProxy(app.port, delay=0.4)
    yield proxy
    proxy.close()


def test_a_second_enter_pressed_before_the_first_ones_result_reached_the_page_sends_nothing_more(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream, slower: LatencyProxy
) -> None:
    page = load(open_page(None, timeout_ms=30_000), slower.url + "/")
    upstream.plan(Behavior(text="only one answer", chunk_delay=0.0))
    box = page.get_by_label("Message")
    box.fill("pressed twice")
    box.press("Enter")
    deadline = page.evaluate("Date.now()") + 20_000
    while not upstream.records and page.evaluate("Date.now()") < deadline:  # the Send was recorded (the upstream asked)
        page.wait_for_timeout(20)  # the poll interval of a condition wait
    assert upstream.records, "the first Send never reached the model"
    assert box.input_value() == "pressed twice", "the page saw the Send's result already: no test"
    box.press("Enter")
    expect(page.locator(".lc-assistant").first).to_contain_text("only one answer", timeout=30_000)
    expect(box).to_have_value("", timeout=10_000)
    page.wait_for_timeout(1600)  # a named window: nothing more arrives (the link takes 0.8 s both ways)
    assert len(upstream.records) == 1, "the second Enter sent the message again"
    expect(page.locator(".lc-user")).to_have_count(1)
    expect(box).to_have_value("")
