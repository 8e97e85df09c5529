"""End-to-end, in headless Chromium: the append-only text stream ends showing exactly a full render of the text.

The page gets only what was added to an answer (``ui.markdown.stream``); these tests check in the real DOM that
whatever happened on the way (an ordinary stream, a websocket message lost, a reconnect, a Stop in half-written
markup), the answer ends with the same visible text as a fresh render of its final text (``render_blocks``).
"""

from __future__ import annotations

import json
import operator

from playwright.sync_api import Page, WebSocketRoute, expect

from tests.support.app_process import AppProcess
from tests.support.browser import Pages, conversation_id, last_answer, send, wait_words
from tests.support.fault_proxy import FaultProxy
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until_blocking
from ui.markdown.safe import render_blocks

RICH = (
    "A first paragraph with **bold** words, `code`, a [link](https://example.com) and a < b & c.\n\n"
    '```python\ndef greet(name):\n    return f"hello {name}"  # <not a tag>\n\n\n'
    "print(greet('x'), \"${x} \\\\ `y`\")\n```\n\n"
    "- one item\n- two *items*\n\n  still item two\n- three\n\n" + " ".join(f"tail{n}" for n in range(120))
)
TIMEOUT_MS = 20_000  # a page's waits: the streams here are long
SHOWN_VS_FULL = """blocks => {
  const shown = [...document.querySelectorAll('.lc-assistant .lc-body .lc-stream')].pop();
  const full = document.createElement('div');
  full.className = shown.className;
  for (const html of blocks) {
    const block = document.createElement('div');
    block.className = 'nicegui-markdown lc-md';
    block.setHTML(html);
    full.appendChild(block);
  }
  const hide = document.createElement('style');
  hide.textContent = '.lc-copy-code { display: none !important; }';
  document.head.appendChild(hide);
  shown.parentElement.appendChild(full);
  const texts = [shown.innerText, full.innerText];
  full.remove();
  hide.remove();
  return texts;
}"""


class Relay:
    """Passes the page's websocket through, dropping or counting the stream's messages when told to."""

    def __init__(self) -> None:
        self.drop_at: int | None = None  # drop the n-th text delta (counted from 1)
        self.close_at: int | None = None  # close the socket at the n-th text delta (the page reconnects)
        self.close_every: int | None = None  # close it at every n-th text delta, ``closes_left`` times
        self.closes_left = 0
        self.closed = 0
        self.deltas = 0
        self.whole_states = 0

    def __call__(self, ws: WebSocketRoute) -> None:
        server = ws.connect_to_server()
        ws.on_message(server.send)

        def from_server(message: str | bytes) -> None:
            text = message if isinstance(message, str) else message.decode("utf-8", "replace")
            if "lcStream(" in text:
                if ',1])"' in text:  # [seq, text, blocks, 1]: the whole state
                    self.whole_states += 1
                else:
                    self.deltas += 1
                    if self.deltas == self.drop_at:
                        return
                    every = self.close_every
                    if self.deltas == self.close_at or (every and self.closes_left and self.deltas % every == 0):
                        self.closes_left -= self.deltas != self.close_at
                        self.closed += 1
                        ws.close()
                        return
            ws.send(message)

        server.on_message(from_server)


def shown_and_full(page: Page, text: str, cut: bool = False) -> tuple[str, str]:
    shown, full = page.evaluate(SHOWN_VS_FULL, render_blocks(text, cut))
    return shown, full


def test_a_streamed_answer_with_prose_code_and_a_list_ends_as_its_full_render(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    page = open_page(app, timeout_ms=TIMEOUT_MS)
    upstream.plan(Behavior(text=RICH, chunk_delay=0.005))
    send(page, "show me everything")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    shown, full = shown_and_full(page, RICH)
    assert shown == full and "tail119" in shown
    body = last_answer(page).locator(".lc-body")
    expect(body.locator("pre code")).to_contain_text('return f"hello {name}"  # <not a tag>')
    expect(body.locator("pre code")).to_contain_text('"${x} \\\\ `y`"')  # a JavaScript template's own marks
    expect(body.locator("li")).to_have_count(3)
    expect(body.locator("strong")).to_have_text("bold")
    assert "**" not in shown and "```" not in shown


def test_a_lost_message_brings_one_whole_state_and_the_answer_still_ends_as_its_full_render(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    relay = Relay()
    relay.drop_at = 5
    page = open_page(app, timeout_ms=TIMEOUT_MS, route=relay)
    upstream.plan(Behavior(text=RICH, chunk_delay=0.01))
    send(page, "lose one")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    assert relay.deltas > relay.drop_at and relay.whole_states >= 1
    shown, full = shown_and_full(page, RICH)
    assert shown == full


def test_a_reconnect_mid_stream_ends_as_the_full_render(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    relay = Relay()
    relay.close_at = 4
    page = open_page(app, timeout_ms=TIMEOUT_MS, route=relay)
    upstream.plan(Behavior(text=RICH, chunk_delay=0.01))
    send(page, "reconnect")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    assert relay.deltas > relay.close_at
    # a message missed in the reconnect is asked for again ('sync') and the whole state comes a round trip later
    # than the status: the end is the full render once that has arrived
    blocks = render_blocks(RICH)
    wait_until_blocking(
        lambda: operator.eq(*shown_and_full(page, RICH)), timeout=5, what=f"the full render of {len(blocks)} blocks"
    )


def test_ten_drops_during_a_2000_chunk_answer_end_with_the_ledgers_text_on_screen_and_after_a_reload(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    """Tokens duplicated or replayed after a reconnect (hermes-webui #2051, LibreChat #11940): every reconnect
    resumes from what the page applied, so the text on screen is the ledger's, character for character."""
    relay = Relay()
    relay.close_every, relay.closes_left = 6, 10
    page = open_page(app, timeout_ms=60_000, route=relay)
    text = RICH + "\n\n" + " ".join(f"w{n}" for n in range(2000 - len(RICH.split())))
    upstream.plan(Behavior(text=text, chunk_delay=0.004))
    send(page, "a long one, through a bad network")
    expect(last_answer(page)).to_have_attribute("data-status", "complete", timeout=90_000)
    assert relay.closed == 10, f"{relay.closed} drops during {relay.deltas} deltas"
    assert upstream.last.chunks_sent >= 1990
    wait_until_blocking(lambda: operator.eq(*shown_and_full(page, text)), timeout=10, what="the full render")
    shown, full = shown_and_full(page, text)
    assert shown == full and shown.count(f" {text.split()[-1]}") == 1
    cid = conversation_id(page)
    page.reload()
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    assert operator.eq(*shown_and_full(page, text)), "after a reload: the ledger's text"
    wait_until_blocking(lambda: app.stored_text(cid) == text, timeout=10, what="the ledger to hold the answer")


def test_a_stopped_half_written_answer_shows_closed_markup(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    page = open_page(app, timeout_ms=TIMEOUT_MS)
    words = " ".join(f"w{n}" for n in range(400))
    upstream.plan(Behavior(text=f"Intro.\n\nSome **{words}** end.", chunk_delay=0.02))
    send(page, "stop me in bold")
    wait_words(page, 12)
    page.get_by_role("button", name="Stop").click()
    expect(last_answer(page)).to_have_attribute("data-status", "interrupted")
    body = last_answer(page).locator(".lc-body")
    expect(body.locator("strong")).to_contain_text("w1 w2")
    cid = conversation_id(page)
    stopped = [e["text"] for e in app.export(cid, having="persisted") if e["kind"] == "persisted"][-1]
    assert stopped.startswith("Intro.\n\nSome **w0") and not stopped.endswith("**")
    shown, full = shown_and_full(page, stopped, cut=True)
    assert shown == full and "**" not in shown


def test_a_frame_torn_in_half_a_stalled_network_and_a_reset_during_an_answer_end_with_the_ledgers_text_once(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    """The same class at the TCP level, between Chromium and the app (``FaultProxy``): a websocket frame cut in the
    middle and the connection reset, the network stalled for over a second, every socket dropped; after each the
    page reconnects and the text on screen is the ledger's, each update applied once."""
    proxy = FaultProxy(app.port)
    try:
        page = open_page(None, timeout_ms=60_000)
        page.goto(proxy.url + "/")
        text = RICH + "\n\n" + " ".join(f"w{n}" for n in range(1200))
        upstream.plan(Behavior(text=text, chunk_delay=0.016))  # 20 s: longer than five breaks on a busy machine
        send(page, "a long one, through a broken network")
        faults = (proxy.cut_mid_frame, lambda: proxy.hold(1.5), proxy.drop, proxy.cut_mid_frame, proxy.drop)
        sockets = 1
        for fault in faults:  # each once the page is connected again and more of the answer came
            wait_until_blocking(lambda: len(proxy.sockets()) == 1, timeout=30, what="the page connected again")
            sent = upstream.last.chunks_sent if upstream.records else 0

            def more(sent: int = sent) -> bool:
                return bool(upstream.records) and upstream.last.chunks_sent >= sent + 60

            wait_until_blocking(more, what="more of the answer")
            fault()
            sockets += fault is not faults[1]
        expect(last_answer(page)).to_have_attribute("data-status", "complete", timeout=90_000)
        assert proxy.faults == {"cut": 2, "held": 1, "dropped": 2}
        wait_until_blocking(lambda: len(proxy.sockets()) == 1, timeout=30, what="the page connected again")
        made = len([link for link in proxy.links if link.websocket])  # a reconnect may take more than one try
        assert made >= sockets, f"{made} sockets for {sockets - 1} breaks: the page did not reconnect after each"
        wait_until_blocking(lambda: operator.eq(*shown_and_full(page, text)), timeout=10, what="the full render")
        shown, _ = shown_and_full(page, text)
        assert shown.count(" w1199") == 1
        cid = conversation_id(page)
        exported = [json.loads(line) for line in page.request.get(f"{proxy.url}/export/{cid}").text().splitlines()]
        assert [e["text"] for e in exported if e["kind"] == "persisted"] == [text]
        page.reload()
        expect(last_answer(page)).to_have_attribute("data-status", "complete")
        assert operator.eq(*shown_and_full(page, text)), "after a reload: the ledger's text"
    finally:
        proxy.close()
