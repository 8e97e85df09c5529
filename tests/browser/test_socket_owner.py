"""Issue 42 item 5 in a real browser: a second socket.io connection that knows a tab's client id cannot press that
tab's buttons, answer its JavaScript or write lines into the server log; the tab's own socket still can.

The module's app runs on the scripted upstream; the intruder is python-socketio's client (installed with NiceGUI),
connecting as any script could (with an ``Origin``: the front door wants one).
"""

from __future__ import annotations

import socketio  # type: ignore[import-untyped]
from playwright.sync_api import Page

from tests.support.app_process import AppProcess
from tests.support.waiting import wait_until_blocking

PRESETS_BUTTON = """() => {
  const el = document.querySelector('[aria-label="Agent presets"]').closest('[id^="c"]');
  const id = Number(el.id.slice(1));
  return [id, mounted_app.elements[id].events.find(e => e.type === 'click').listener_id];
}"""
REFUSED = "refused a socket.io message from socket"


def lines(app: AppProcess, needle: str) -> list[str]:
    return [x for x in app.log.read_text().splitlines() if needle in x]


def test_a_socket_that_does_not_own_a_tab_cannot_press_its_buttons_or_write_the_server_log(
    app: AppProcess, page: Page
) -> None:
    start = page.url
    victim = page.evaluate("() => window.clientId")
    element, listener = page.evaluate(PRESETS_BUTTON)
    intruder = socketio.Client(reconnection=False)
    intruder.connect(
        app.url, socketio_path="/_nicegui_ws/socket.io", transports=["polling"], headers={"Origin": app.url}
    )
    try:
        click = {"id": element, "client_id": victim, "listener_id": listener, "args": []}
        intruder.emit("event", click)
        intruder.emit("log", {"client_id": victim, "level": "error", "message": "x\n2026 ERROR forged: line"})
        wait_until_blocking(lambda: len(lines(app, REFUSED)) >= 2, what="both messages refused")
    finally:
        intruder.disconnect()
    assert page.url == start, "the tab did not move"
    assert not lines(app, "forged"), "nothing the intruder sent reached the log"

    page.evaluate(
        "() => window.socket.emit('log', {client_id: window.clientId, level: 'warning', message: 'own\\nERROR fake'})"
    )
    [own] = wait_until_blocking(lambda: lines(app, "own\\nERROR fake"), what="the tab's own log line")
    assert "ledger_chat.browser" in own
    assert not [x for x in app.log.read_text().splitlines() if x.startswith("ERROR fake")], "one line, escaped"
    page.get_by_label("Agent presets").click()
    page.wait_for_url("**/presets")  # the same element and listener, from the tab's own socket, do act
