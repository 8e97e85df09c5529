"""A TCP proxy between the browser and the app that breaks the page's websocket the ways networks do.

``FaultProxy(port)`` listens on a free local port (``url``) and forwards every connection to the app unchanged until
told otherwise; the faults act on the connections that carry a websocket (the ones whose first bytes ask for an
``Upgrade: websocket``), never on page loads:

- ``cut_mid_frame()``: the next bytes the app sends are forwarded only in part (half of them, at least one byte
  short of the whole), then both sides of the connection are reset (``SO_LINGER`` 0): the browser holds a torn frame.
- ``hold(seconds)``: nothing is forwarded either way for ``seconds`` (a stalled network), then everything held
  arrives, in order.
- ``drop()``: every websocket connection is reset at once.

``faults`` counts what was done (``cut``, ``held``, ``dropped``); ``close()`` ends it all.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections import Counter


def reset(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.close()


class Link:
    """One proxied connection: the browser's side, the app's side, whether it carries a websocket."""

    def __init__(self, client: socket.socket, server: socket.socket) -> None:
        self.client, self.server = client, server
        self.websocket = False
        self.cut_next = False
        self.closed = False

    def close(self) -> None:
        self.closed = True
        reset(self.client)
        reset(self.server)


class FaultProxy:
    def __init__(self, target_port: int, host: str = "127.0.0.1") -> None:
        self.target = (host, target_port)
        self.listener = socket.create_server((host, 0))
        self.url = f"http://{host}:{self.listener.getsockname()[1]}"
        self.links: list[Link] = []
        self.faults: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.open = threading.Event()  # cleared while held
        self.open.set()
        self.closed = False
        threading.Thread(target=self._accept, daemon=True, name="fault proxy").start()

    def sockets(self) -> list[Link]:
        """The websocket connections that are open and not about to be cut."""
        with self.lock:
            return [link for link in self.links if link.websocket and not link.closed and not link.cut_next]

    def cut_mid_frame(self) -> None:
        for link in self.sockets():
            link.cut_next = True
        self.faults["cut"] += 1

    def hold(self, seconds: float) -> None:
        self.open.clear()
        self.faults["held"] += 1
        threading.Timer(seconds, self.open.set).start()

    def drop(self) -> None:
        for link in self.sockets():
            link.close()
        self.faults["dropped"] += 1

    def close(self) -> None:
        self.closed = True
        self.open.set()
        self.listener.close()
        with self.lock:
            for link in self.links:
                link.close()

    def _accept(self) -> None:
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.target)
            except OSError:
                reset(client)
                continue
            link = Link(client, server)
            with self.lock:
                self.links.append(link)
            threading.Thread(target=self._pump, args=(link, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(link, False), daemon=True).start()

    def _pump(self, link: Link, upward: bool) -> None:
        """Forward one direction of ``link`` (``upward``: browser to app) until either side ends."""
        source, sink = (link.client, link.server) if upward else (link.server, link.client)
        first = True
        while not link.closed:
            try:
                data = source.recv(65536)
            except OSError:
                data = b""
            if upward and first and b"upgrade: websocket" in data.lower():
                link.websocket = True
            first = False
            self.open.wait()
            if not data:  # one side ended the connection (a websocket has no use for half of one): it is over
                link.close()
                return
            if not upward and link.cut_next and len(data) > 1:
                with contextlib.suppress(OSError):
                    sink.sendall(data[: max(1, len(data) // 2)])
                time.sleep(0.05)  # the torn bytes reach the browser before the reset
                link.close()
                return
            try:
                sink.sendall(data)
            except OSError:
                link.close()
                return
