"""A raw websocket handshake over a plain socket: what any client, browser or script, would send.

``handshake`` sends an RFC 6455 upgrade request with the given headers and returns the HTTP status, the response
headers and, after a 101, the first text frame the server sent (for socket.io: the ``0{"sid": ...}`` open packet).
"""

from __future__ import annotations

import base64
import os
import socket
from dataclasses import dataclass


@dataclass
class Handshake:
    status: int
    headers: dict[str, str]
    first_frame: bytes = b""


def handshake(
    host: str, port: int, path: str, headers: dict[str, str] | None = None, source: str | None = None
) -> Handshake:
    """Upgrade ``path`` to a websocket; ``source`` binds the client to that local address (e.g. 127.0.0.2)."""
    request = {
        "Host": f"{'[' + host + ']' if ':' in host else host}:{port}",
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode(),
        "Sec-WebSocket-Version": "13",
        **(headers or {}),
    }
    lines = [f"GET {path} HTTP/1.1", *(f"{k}: {v}" for k, v in request.items()), "", ""]
    with socket.create_connection((host, port), timeout=5, source_address=(source, 0) if source else None) as sock:
        sock.sendall("\r\n".join(lines).encode("latin-1"))
        raw = b""
        while b"\r\n\r\n" not in raw:
            piece = sock.recv(4096)
            if not piece:
                break
            raw += piece
        head, _, rest = raw.partition(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        found = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines)}
        result = Handshake(status=int(status_line.split()[1]), headers=found)
        if result.status == 101:
            result.first_frame = _first_frame(sock, rest)
        return result


def _first_frame(sock: socket.socket, data: bytes) -> bytes:
    while len(data) < 2:
        data += sock.recv(4096)
    length = data[1] & 0x7F
    start = 2
    if length == 126:
        while len(data) < 4:
            data += sock.recv(4096)
        length, start = int.from_bytes(data[2:4], "big"), 4
    while len(data) < start + length:
        data += sock.recv(4096)
    return data[start : start + length]
