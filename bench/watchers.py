"""Lightweight watchers: socket.io clients that open a chat as a tab does and receive every update, without rendering.

    python -m bench.watchers APP_URL CID [CID ...]    # one watcher per conversation, in this process

A watcher does what NiceGUI's page script does (``nicegui/static/nicegui.js``), nothing less: it GETs the chat's
page like a browser (so the server builds the page's client and its elements), reads the socket query the page
would use (``client_id``, ``next_message_id``, ``implicit_handshake``) from the HTML, adds a ``document_id`` and a
``tab_id`` of its own, and connects NiceGUI's socket.io (``/_nicegui_ws/socket.io``, websocket, with the page's
``Origin`` and cookies): the implicit handshake makes it the page's socket, so the server sends it every
``update``, ``run_javascript`` and the rest a tab would get. It answers each ``run_javascript`` that waits for an
answer (as the page does, with no result) and acks what it received every 3 s (the page's ``ack``), so the
server's outbox is pruned as for a tab. It counts every message and its bytes (the raw socket.io text) and stamps
the first arrival of each word ``xNNNwNNNN`` (wall clock), for chunk -> watcher.

Guarantees: the process prints ``ready N`` once every watcher completed its handshake (N watchers), then for each
line ``report`` on its input one JSON line (per conversation: messages, bytes, disconnects, first arrival of each
word, and this process's CPU seconds); it ends when its input closes. ``WatcherProcess`` runs it from a bench.
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import re
import subprocess
import sys
import time
import urllib.parse
import uuid
from pathlib import Path
from typing import Any

import aiohttp
import socketio  # type: ignore[import-untyped]

__all__ = ["WatcherProcess"]

QUERY = re.compile(r"query: (\{.*?\}),\s*\n")
ELEMENTS = re.compile(r"parseElements\(String\.raw`(.*?)`\)", re.S)
UNESCAPED = (("&#36;", "$"), ("&#96;", "`"), ("&gt;", ">"), ("&lt;", "<"), ("&amp;", "&"))  # parseElements'
#: the page's components that tell the server they are mounted, with the event and its argument (their ``.js``)
MOUNT_EVENTS = {"nicegui-markdown_stream": ("sync", lambda props: (props.get("init") or [0])[0])}
WORD = re.compile(r"[a-z]\d{3}w(\d{4})")
ROOT = Path(__file__).resolve().parents[1]
ACK_EVERY = 3.0  # the page's own ack interval


class Counted(socketio.AsyncClient):  # type: ignore[misc]
    """A socket.io client that counts the raw messages it receives and stamps each word's first arrival."""

    def __init__(self) -> None:
        super().__init__(reconnection=False)
        self.messages = 0
        self.bytes = 0
        self.words: dict[int, float] = {}

    async def _handle_eio_message(self, data: Any) -> None:
        now = time.time()
        self.messages += 1
        text = data if isinstance(data, str) else bytes(data).decode(errors="replace")
        self.bytes += len(text.encode()) if isinstance(data, str) else len(data)
        for found in WORD.finditer(text):
            self.words.setdefault(int(found.group(1)), now)
        await super()._handle_eio_message(data)


def parse_query(text: str) -> dict[str, Any]:
    """The page's socket query as the template wrote it: JSON, or a Python dict's repr."""
    try:
        return dict(json.loads(text))
    except json.JSONDecodeError:
        return dict(ast.literal_eval(text))


class Watcher:
    def __init__(self, base: str, cid: str) -> None:
        self.base, self.cid = base, cid
        self.sio = Counted()
        self.client_id = ""
        self.next_id = 0
        self.disconnects = 0
        self.mounted: set[str] = set()

    async def start(self, http: aiohttp.ClientSession) -> None:
        headers = {"Accept": "text/html", "Sec-Fetch-Mode": "navigate"}
        async with http.get(f"{self.base}/chat/{self.cid}", headers=headers) as response:
            page = await response.text()
            assert response.status == 200, (response.status, page[:500])
        found = QUERY.search(page)
        assert found, "no socket query in the chat's page"
        query = parse_query(found.group(1))
        self.client_id, self.next_id = query["client_id"], int(query["next_message_id"])
        elements = ELEMENTS.search(page)
        assert elements, "no elements in the chat's page"
        raw = elements.group(1)
        for escaped, char in UNESCAPED:
            raw = raw.replace(escaped, char)
        first = json.loads(raw)
        query.update(document_id=str(uuid.uuid4()), tab_id=str(uuid.uuid4()))
        plain = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in query.items()}
        cookies = "; ".join(f"{c.key}={c.value}" for c in http.cookie_jar)
        self.sio.on("*", self.received)
        self.sio.on("disconnect", self.lost)
        await self.sio.connect(
            f"{self.base}?{urllib.parse.urlencode(plain)}",
            headers={"Origin": self.base, **({"Cookie": cookies} if cookies else {})},
            transports=["websocket"],
            socketio_path="/_nicegui_ws/socket.io",
            wait_timeout=30,
        )
        await self.mount(first)

    async def mount(self, elements: dict[str, Any]) -> None:
        """What the page's components say when they are mounted (the markdown stream's 'sync': until then the
        server sends it nothing), for the elements not mounted yet."""
        for key, element in elements.items():
            if not isinstance(element, dict) or key in self.mounted or element.get("tag") not in MOUNT_EVENTS:
                continue
            self.mounted.add(key)
            kind, argument = MOUNT_EVENTS[element["tag"]]
            for listener in element.get("events", []):
                if listener.get("type") == kind:
                    args = [json.dumps(argument(element.get("props", {})))]
                    message = {"id": int(key), "client_id": self.client_id, "listener_id": listener["listener_id"]}
                    await self.sio.emit("event", {**message, "args": args})

    async def received(self, event: str, data: Any = None) -> None:
        if isinstance(data, dict) and isinstance(data.get("_id"), int):
            self.next_id = max(self.next_id, data["_id"] + 1)
        if event == "update" and isinstance(data, dict):
            await self.mount(data)
        if event == "run_javascript" and isinstance(data, dict) and data.get("request_id"):
            answer = {"request_id": data["request_id"], "client_id": self.client_id, "result": None}
            await self.sio.emit("javascript_response", answer)

    async def lost(self, *_: Any) -> None:
        self.disconnects += 1

    async def ack(self) -> None:
        if self.sio.connected:
            await self.sio.emit("ack", {"client_id": self.client_id, "next_message_id": self.next_id})

    def report(self) -> dict[str, Any]:
        s = self.sio
        return {"messages": s.messages, "bytes": s.bytes, "disconnects": self.disconnects, "words": s.words}


async def watch(base: str, cids: list[str]) -> None:
    loop = asyncio.get_running_loop()
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        watchers = [Watcher(base, cid) for cid in cids]
        for watcher in watchers:  # one after the other, as tabs opened by people would
            await watcher.start(http)
        print(f"ready {len(watchers)}", flush=True)

        async def acks() -> None:
            while True:
                await asyncio.sleep(ACK_EVERY)  # the page's ack timer
                await asyncio.gather(*(w.ack() for w in watchers))

        acking = asyncio.create_task(acks())
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            if line.strip() == "report":
                per = {w.cid: w.report() for w in watchers}
                print(json.dumps({"watchers": per, "cpu": time.process_time()}), flush=True)
        acking.cancel()
        await asyncio.gather(*(w.sio.disconnect() for w in watchers))


class WatcherProcess:
    """``python -m bench.watchers`` for ``cids`` of the app at ``url``; returns once every watcher is connected."""

    def __init__(self, url: str, cids: list[str], log: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        cmd = [sys.executable, "-m", "bench.watchers", url, *cids]
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log.open("ab"), text=True
        )
        assert self.proc.stdout is not None and self.proc.stdin is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        ready = self.stdout.readline()
        assert ready.startswith("ready"), log.read_text()[-3000:]

    def report(self) -> dict[str, Any]:
        self.stdin.write("report\n")
        self.stdin.flush()
        return dict(json.loads(self.stdout.readline()))

    def stop(self) -> None:
        self.stdin.close()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()


if __name__ == "__main__":
    asyncio.run(watch(sys.argv[1], sys.argv[2:]))
