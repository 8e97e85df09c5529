"""Chainlit on the same stream, for ``bench.stream_bench`` (issue 11: app CPU per answer at most Chainlit's, same run).

``Rival.start`` makes a throwaway venv (or reuses the one given) holding Chainlit 2.x and the very litellm, openai,
httpx, aiohttp and pydantic versions the app runs. Chainlit's app calls ``litellm.acompletion(stream=True)``:
litellm's plain route and its stream wrapper. The app takes its light route for ``openai/`` models, a much cheaper
client floor, so the like-for-like comparison is Chainlit against the app on the plain route
(``LEDGER_CHAT_STREAM_ROUTE=litellm``), which ``bench.stream_bench`` runs beside it; it runs
``bench/chainlit_app.py`` there on a free port, its files in a temp folder. ``measure`` drives one answer in
headless Chromium as the app's measure does: CPU of the Chainlit process from Send until its server finished the
answer and the page shows the answer's last word, websocket bytes received meanwhile, and last token sent by the
upstream -> in the DOM. Nothing here is imported by the app or the tests; making the venv needs the package registry
(about 90 s here).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from tests.support.app_process import CHROMIUM_ARGS, ROOT, free_port

APP = ROOT / "bench" / "chainlit_app.py"
SEEN_JS = """marker => {
  window.__lcSeen = null;
  const look = () => {
    if (window.__lcSeen === null && document.body.innerText.includes(marker)) window.__lcSeen = Date.now();
  };
  new MutationObserver(look).observe(document.body, { childList: true, subtree: true, characterData: true });
}"""


@dataclass
class RivalRun:
    cpu: float
    bytes: int
    dom_ms: float | None


def make_venv(where: Path) -> Path:
    """A venv with Chainlit and the app's litellm and openai versions; returns its python."""
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    python = where / "bin" / "python"
    pins = [f"{name}=={version(name)}" for name in ("litellm", "openai", "httpx", "aiohttp", "pydantic")]
    subprocess.run([str(python), "-m", "pip", "install", "-q", "chainlit>=2,<3", *pins], check=True)
    return python


class Rival:
    def __init__(self, api_base: str, venv: Path | None) -> None:
        self.api_base, self.venv = api_base, venv
        self.folder = Path(tempfile.mkdtemp(prefix="chainlit-bench-"))
        self.done_file = self.folder / "done.txt"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Rival:
        python = self.venv / "bin" / "python" if self.venv else make_venv(self.folder / "venv")
        env = {
            **os.environ,
            "BENCH_API_BASE": self.api_base,
            "BENCH_DONE_FILE": str(self.done_file),
            "LITELLM_LOG": "ERROR",  # as the app runs litellm
        }
        env.pop("PYTHONPATH", None)
        cmd = [str(python), "-m", "chainlit", "run", str(APP), "--headless", "--host", "127.0.0.1"]
        self.proc = subprocess.Popen(
            [*cmd, "--port", str(self.port)],
            cwd=self.folder,
            env=env,
            stdout=(self.folder / "chainlit.log").open("ab"),
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 120
        while "available at" not in self.log():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"Chainlit did not start: {self.log()[-2000:]}")
            time.sleep(0.2)  # the poll interval of a condition wait (the ready line), not a sync sleep
        return self

    def log(self) -> str:
        path = self.folder / "chainlit.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=15)

    def measure(self, upstream: Any, timed: Any, behavior: Any, last: str, cpu_seconds: Any) -> RivalRun:
        """One answer in a fresh browser, as the app's measure does; Chainlit starts a new thread (its session per
        connection, no data layer configured) where the app adds the answer to the bench's one chat."""
        assert self.proc is not None
        answers = self.done_file.read_text().count("\n") if self.done_file.exists() else 0
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.set_default_timeout(600_000)
            frames: list[int] = []
            counting = {"on": False}
            page.on(
                "websocket",
                lambda ws: ws.on("framereceived", lambda data: frames.append(len(data)) if counting["on"] else None),
            )
            page.goto(self.url)
            page.locator("#chat-input").fill("stream please")
            page.wait_for_timeout(500)
            page.evaluate(SEEN_JS, last)
            upstream.plan(behavior)
            counting["on"], timed.sent_at = True, 0.0
            cpu0 = cpu_seconds(self.proc.pid)
            page.locator("#chat-submit").click()
            page.wait_for_function("m => document.body.innerText.includes(m)", arg=last, polling=50)
            while not self.done_file.exists() or self.done_file.read_text().count("\n") <= answers:
                time.sleep(0.02)  # the poll interval of a condition wait (the server's answer done), not a sync sleep
            cpu = cpu_seconds(self.proc.pid) - cpu0
            page.wait_for_timeout(300)
            counting["on"] = False
            seen = page.evaluate("window.__lcSeen")
            browser.close()
        dom_ms = (seen / 1000 - timed.sent_at) * 1000 if seen and timed.sent_at else None
        return RivalRun(cpu, sum(frames), dom_ms)
