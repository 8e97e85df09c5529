"""Whether something listens on a port of 127.0.0.1: for tests that start a tool server over streamable HTTP and
wait for it to take connections (or to be gone). A free port to bind is ``tests.support.app_process.free_port``."""

from __future__ import annotations

import socket


def port_open(port: int) -> bool:
    """True when a TCP connection to 127.0.0.1 on ``port`` is accepted now."""
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0
