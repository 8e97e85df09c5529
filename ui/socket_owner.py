"""Events bound to their socket: NiceGUI's socket.io handlers, wrapped at start-up so that a message naming a
client is acted on only when it came over that client's own socket.

NiceGUI routes ``event``, ``javascript_response``, ``ack`` and ``log`` by the ``client_id`` the message carries and
never asks which socket sent it, so any connection that learned a tab's client id could press that tab's buttons.
``bind_events_to_sockets()`` (``app.wiring``, once, before serving) replaces those four handlers in NiceGUI's
``socketio.AsyncServer``.

Guarantees:
- A message is handed to NiceGUI's own handler only when its ``client_id`` names a live client whose handshake
  registered the sending socket (``owns``: the socket id is among that client's sockets); otherwise it is
  dropped and a line says which socket tried (at most ``LOG_REFUSALS`` such lines per socket).
- Team mode: a message is handed on only while the session its page was opened with holds
  (``ui.sessions.acting_for``), and it runs as that person (``engine.people.acting``); an ended session's
  messages are dropped (its page is sent to the sign-in page within a second: ``ui.sessions.SessionSweep``).
- The browser's ``log`` event is written only for the owning socket, under ``ledger_chat.browser``, as one line:
  level one of debug/info/warning/error (anything else: warning), the text with control characters escaped
  (no forged log lines), cut to ``LOG_CHARS`` characters, at most ``LOG_LINES`` lines per socket per minute.
- ``connect``, ``handshake`` and ``disconnect`` stay NiceGUI's (the handshake checks the tab id pinned to the
  client and the query's client id itself).
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict, deque
from collections.abc import Callable
from typing import Any

log = logging.getLogger("ledger_chat.access")
browser_log = logging.getLogger("ledger_chat.browser")
BOUND_EVENTS = ("event", "javascript_response", "ack")
LOG_CHARS = 2000
LOG_LINES = 30
LOG_REFUSALS = 3
LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}
_refused: defaultdict[str, int] = defaultdict(int)
_logged: defaultdict[str, deque[float]] = defaultdict(deque)


def owns(sid: str, msg: Any) -> Any:
    """The NiceGUI client ``msg`` names when ``sid`` is one of its sockets, else None."""
    from nicegui import Client

    client_id = msg.get("client_id") if isinstance(msg, dict) else None
    client = Client.instances.get(client_id) if isinstance(client_id, str) else None
    if client is None or sid not in client._socket_to_document_id:  # noqa: SLF001 - NiceGUI's socket registry
        if client is not None and _refused[sid] < LOG_REFUSALS:
            _refused[sid] += 1
            log.warning("refused a socket.io message from socket %s for a client it does not own", sid)
        return None
    return client


def bind_events_to_sockets() -> None:
    from nicegui import core

    handlers = core.sio.handlers["/"]
    for name in BOUND_EVENTS:
        original = handlers[name]
        if not getattr(original, "bound_to_socket", False):
            core.sio.on(name, _bound(original))
    core.sio.on("log", _log)
    core.sio.on("disconnect", _forgetting(handlers["disconnect"]))


def _bound(original: Callable[[str, Any], Any]) -> Callable[[str, Any], Any]:
    from engine.people import acting_as
    from ui.sessions import ENDED, acting_for

    def handler(sid: str, msg: Any) -> Any:
        client = owns(sid, msg)
        if client is None:
            return None
        person = acting_for(client)  # team mode: the page's session, checked at every event
        if person == ENDED:
            return None
        with acting_as(person):  # the event, and every task it starts, acts for that person
            return original(sid, msg)

    handler.bound_to_socket = True  # type: ignore[attr-defined]
    return handler


def _log(sid: str, msg: Any) -> None:
    if owns(sid, msg) is None:
        return
    now = time.monotonic()
    recent = _logged[sid]
    while recent and recent[0] <= now - 60:
        recent.popleft()
    if len(recent) >= LOG_LINES:
        return
    recent.append(now)
    level = LEVELS.get(str(msg.get("level")), logging.WARNING)
    browser_log.log(level, "browser %s: %s", msg["client_id"][:12], one_line(msg.get("message")))


def one_line(value: Any) -> str:
    """``value`` as text on one line: control characters (line breaks included) escaped, at most ``LOG_CHARS``."""
    text = value if isinstance(value, str) else repr(value)
    text = text[:LOG_CHARS]
    escaped = "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)
    return escaped[:LOG_CHARS]


def _forgetting(original: Callable[..., Any]) -> Callable[..., Any]:
    if getattr(original, "bound_to_socket", False):
        return original

    def handler(sid: str, *_: Any) -> Any:  # (sid, reason): NiceGUI's own takes the socket id only
        _refused.pop(sid, None)
        _logged.pop(sid, None)
        return original(sid)

    handler.bound_to_socket = True  # type: ignore[attr-defined]
    return handler
