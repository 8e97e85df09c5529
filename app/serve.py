"""Running the server: logging (credentials redacted), the store opened and locked before anything is served, the
wiring, then NiceGUI's server.

Guarantees: a second process on the same ``--data-dir`` or an unreachable database exits with one line naming it
(exit 1) before the port is bound; so does a port another process holds (checked before anything says where the
app listens: no "on http://…" line is ever followed by the bind error); the line naming the address, the model
and where the data lives ("Ledger Chat on …") is printed only once the port accepts connections
(``announce_once_listening``), so whoever reads it can connect at once; no credential from ``--api-base`` or an
error reaches a log line; uvicorn believes ``X-Forwarded-*`` headers only from the proxies named with
``--forwarded-allow-ips`` (none by default: the client is the TCP peer).
"""

from __future__ import annotations

import errno
import logging
import socket
import sys
import threading
import time

from app.config import AppConfig
from app.stores import open_store
from app.wiring import wire

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def port_taken(host: str, port: int) -> str | None:
    """Why the app cannot listen on ``host:port`` (None: it can), found by binding it for a moment."""
    try:
        addresses = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as exc:
        return f"cannot listen on {host}:{port}: {exc.strerror or exc}"
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server will: TIME_WAIT is fine
            try:
                probe.bind(address)
            except OSError as exc:
                why = "another program is using it" if exc.errno == errno.EADDRINUSE else exc.strerror or str(exc)
                return f"cannot listen on {host}:{port}: {why} (choose another with --port)"
    return None


def announce_once_listening(host: str, port: int, line: str) -> threading.Thread:
    """Print ``line`` once a connection to ``host:port`` succeeds (a wildcard bind is tried on loopback), from a
    thread of its own: the server starts meanwhile."""
    address = ({"0.0.0.0": "127.0.0.1", "::": "::1", "localhost": "127.0.0.1"}.get(host, host), port)

    def wait_then_print() -> None:
        while True:
            try:
                with socket.create_connection(address, timeout=1):
                    break
            except OSError:
                time.sleep(0.01)  # the poll interval of a condition wait (the port accepting), not a sync sleep
        print(line, flush=True)

    thread = threading.Thread(target=wait_then_print, name="announce", daemon=True)
    thread.start()
    return thread


def run(config: AppConfig) -> int:
    from nicegui import ui

    from engine.redaction import RedactingFormatter
    from ledger.errors import DatabaseUnavailableError, DataDirInUseError
    from ui.access import new_token

    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    for handler in logging.getLogger().handlers:
        handler.setFormatter(RedactingFormatter(LOG_FORMAT))  # no credential from --api-base or an error in a log
    for noisy in ("LiteLLM", "litellm", "httpx"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    taken = port_taken(config.host, config.port)
    if taken is not None:
        print(f"ledger-chat: {taken}", file=sys.stderr)
        return 1
    try:
        store = open_store(config)
    except (DataDirInUseError, DatabaseUnavailableError) as exc:
        print(f"ledger-chat: {exc}", file=sys.stderr)
        return 1
    token = (config.token or new_token()) if config.needs_token or config.team else None
    wire(config, store, token)
    where = f"http://{config.url_host}:{config.port}"
    if config.team:
        where += " (team mode: everyone signs in)"
    elif token and not config.token:
        where += f" — open {config.local_url}/?token={token}"
    elif token:
        where += " (access token required)"
    announce_once_listening(
        config.host, config.port, f"Ledger Chat on {where} — model: {config.model} — data: {store.where}"
    )
    ui.run(
        host=config.host,
        port=config.port,
        title="Ledger Chat",
        favicon="📒",
        reload=False,
        show=config.show,
        reconnect_timeout=3.0,
        show_welcome_message=False,
        dark=None,  # follow the system until the reader picks a theme (remembered in the browser)
        language="en-US",
        tailwind=False,  # no in-browser compiler: ui/static/utilities.css holds the CSS it made (ui.style)
        proxy_headers=bool(config.forwarded_allow_ips),  # uvicorn's default trusts X-Forwarded-For from 127.0.0.1
        forwarded_allow_ips=list(config.forwarded_allow_ips),
    )
    return 0
