"""A TCP proxy that adds network latency: every byte, both ways, arrives ``delay`` seconds after it was sent.

Used to open the page over a slow network (HTTP and its websocket alike) without changing the app. Order is kept
per direction; throughput is not limited. ``LatencyProxy(port, delay)`` listens on a free local port (``url``) until
``close``.
"""

from __future__ import annotations

import contextlib
import queue
import socket
import threading
import time


class LatencyProxy:
    def __init__(self, target_port: int, delay: float, host: str = "127.0.0.1") -> None:
        self.target = (host, target_port)
        self.delay = delay
        self.listener = socket.create_server((host, 0))
        self.url = f"http://{host}:{self.listener.getsockname()[1]}"
        self.closed = False
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True, name="latency proxy").start()

    def close(self) -> None:
        self.closed = True
        self.listener.close()
        for sock in self.sockets:
            with contextlib.suppress(OSError):
                sock.close()

    def _accept(self) -> None:
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            self.sockets += [client, server]
            self._pipe(client, server)
            self._pipe(server, client)

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        pending: queue.Queue[tuple[float, bytes]] = queue.Queue()

        def read() -> None:
            while True:
                try:
                    data = source.recv(65536)
                except OSError:
                    data = b""
                pending.put((time.monotonic() + self.delay, data))
                if not data:
                    return

        def write() -> None:
            while True:
                due, data = pending.get()
                time.sleep(max(0.0, due - time.monotonic()))
                try:
                    if not data:
                        sink.shutdown(socket.SHUT_WR)
                        return
                    sink.sendall(data)
                except OSError:
                    return

        threading.Thread(target=read, daemon=True).start()
        threading.Thread(target=write, daemon=True).start()
