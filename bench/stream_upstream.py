"""The many-streams bench's upstream, in a process of its own (its CPU is neither the app's nor the driver's).

    python -m bench.stream_upstream RATE WORDS      # prints its /v1 base URL, then serves until terminated

``tests.support.upstream.ScriptedUpstream`` answering ``stream xNNN`` with WORDS words ``xNNNw0000 ...`` at RATE
chunks a second, one word per chunk, in paragraphs of 60 words. Guarantees: every word's send is stamped (wall
clock, the ASGI send of its body piece) and every request keeps when it ended and whether it finished
(``closed_at`` is ``time.monotonic``, the machine's clock, the same in every process). Three light routes beside
the model's: ``/stats`` (the stamps, the requests' ends and this process's CPU), ``/ended`` (the ends only: polled
while a Stop is measured) and ``/reset``. ``UpstreamProcess`` starts it and reads them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from starlette.responses import JSONResponse

from demo.server.endpoint import serve_in_thread
from tests.support.upstream import Behavior, ScriptedUpstream

__all__ = ["PROMPT", "WORD", "BenchUpstream", "UpstreamProcess"]

WORD = re.compile(rb"([a-z]\d{3})w(\d{4})")
PROMPT = re.compile(r"stream ([a-z]\d{3})")
ROOT = Path(__file__).resolve().parents[1]


class BenchUpstream(ScriptedUpstream):
    """Answers ``stream xNNN`` with ``words`` words ``xNNNw0000 ...`` at ``rate`` chunks a second, and stamps
    the wall time each word left (the ASGI send of its body piece)."""

    def __init__(self, rate: float, words: int) -> None:
        super().__init__(chunk_delay=1 / rate)
        self.words = words
        self.sent: dict[tuple[str, int], float] = {}
        inner = self.app

        async def stamped(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http" and scope["path"] == "/stats":
                await JSONResponse(self.stats())(scope, receive, send)
                return
            if scope["type"] == "http" and scope["path"] == "/ended":  # light: polled while the streams close
                await JSONResponse({"ended": self.ended()})(scope, receive, send)
                return
            if scope["type"] == "http" and scope["path"] == "/reset":
                self.reset()
                self.sent.clear()
                await JSONResponse({})(scope, receive, send)
                return

            async def timed(message: Any) -> None:
                await send(message)
                body = message.get("body", b"") if message.get("type") == "http.response.body" else b""
                found = WORD.search(body) if body else None
                if found:
                    self.sent[(found.group(1).decode(), int(found.group(2)))] = time.time()

            await inner(scope, receive, timed)

        self.app = stamped  # type: ignore[assignment]

    def stats(self) -> dict[str, Any]:
        """What this run's streams did: when each word left, and when each request ended and how."""
        return {"sent": [[tag, n, at] for (tag, n), at in list(self.sent.items())], "ended": self.ended(),
                "cpu": time.process_time()}  # fmt: skip

    def ended(self) -> list[dict[str, Any]]:
        """When each request ended and how (without the words' stamps: this is polled while the Stop is measured,
        and serializing every stamp would hold this upstream's loop for tens of milliseconds a poll)."""
        with self.lock:
            records = [(r.messages, r.closed_at, r.finished) for r in self.records]
        return [
            {"tag": (PROMPT.findall(str(m[-1].get("content", ""))) or ["?"])[0], "closed_at": c, "finished": f}
            for m, c, f in records
        ]

    def choose(self, messages: list[dict[str, Any]], tools: list[str]) -> Behavior:
        found = PROMPT.search(str(messages[-1].get("content", "")))
        tag = found.group(1) if found else "z999"
        # paragraphs of 60 words; a paragraph starts at its line's start (after a space it would read as the
        # continuation of a list item, and the whole answer would stay one growing block)
        text = "".join(f"{tag}w{n:04d}" + ("\n\n" if n % 60 == 59 else " ") for n in range(self.words))
        return Behavior(text=text, chunk_delay=self.chunk_delay)


class UpstreamProcess:
    """``python -m bench.stream_upstream`` on a free port; ``stats()``, ``ended()``, ``reset()`` ask it."""

    def __init__(self, rate: float, words: int, log: Path) -> None:
        cmd = [sys.executable, "-m", "bench.stream_upstream", str(rate), str(words)]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=log.open("ab"), text=True)
        assert self.proc.stdout is not None
        self.base = self.proc.stdout.readline().strip()
        assert self.base.startswith("http"), log.read_text()[-2000:]

    def stats(self) -> dict[str, Any]:
        return dict(self._get("/stats"))

    def ended(self) -> list[dict[str, Any]]:
        return list(self._get("/ended")["ended"])

    def reset(self) -> None:
        self._get("/reset")

    def _get(self, path: str) -> Any:
        with urllib.request.urlopen(self.base.removesuffix("/v1") + path, timeout=60) as response:
            return json.loads(response.read())

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def main() -> None:
    rate, words = float(sys.argv[1]), int(sys.argv[2])
    base, _ = serve_in_thread(BenchUpstream(rate, words))
    print(base, flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
