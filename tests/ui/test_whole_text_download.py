"""Conversation files that hold a message or a tool result over the bound (as an older version or a hostile file
would write them): the real app (``main.py``) opens each chat with the preview and a download of the whole, and
the whole text comes back byte for byte through ``GET /files/{sha256}``, under the name the ledger gives it."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import httpx

from ledger.bounds import PREVIEW_BYTES, TEXT_BOUND
from ledger.events.core import (
    AnyEvent,
    Created,
    Done,
    Persisted,
    Started,
    StepStarted,
    Submitted,
    ToolCalled,
    ToolResult,
)
from store.tinydb import OVERSIZE_FILE
from tests.support.app_runner import AppRunner
from tests.support.ledger_builders import T0, stamp
from tests.support.stores import write_tinydb_folder
from ui.attachments import size_words


def planted_text(size: int) -> str:
    """``size`` bytes or more of lines that differ (a cut, a swap or a lost byte shows), not all of them ASCII."""
    return "".join(f"{n:09d} planted ✓ ünïcode {'z' * 30}\n" for n in range(size // 50 + 1))


def test_a_planted_message_over_the_bound_opens_as_its_preview_and_downloads_whole(
    run_app: AppRunner, tmp_path: Path
) -> None:
    text = planted_text(OVERSIZE_FILE + TEXT_BOUND)  # over the size another process bounds
    data = text.encode("utf-8")
    sha = hashlib.sha256(data).hexdigest()
    folder = tmp_path / "data"
    events: list[AnyEvent] = [Created(conversation_id="planted", ts=stamp(T0), title="Planted"),
              Submitted(conversation_id="planted", ts=stamp(T0), message_id="u1", turn=1, text=text)]  # fmt: skip
    write_tinydb_folder(folder, {"planted": events})
    with run_app(data=folder) as app, httpx.Client(base_url=app.url, timeout=60) as http:
        page = http.get("/chat/planted")
        assert page.status_code == 200
        assert "Showing the first 64 KB of " in page.text and "Download the whole text" in page.text
        assert (folder / "conv-planted.json").stat().st_size < 2 * PREVIEW_BYTES  # the file was bounded
        whole = http.get(f"/files/{sha}")
        assert whole.status_code == 200 and whole.content == data
        assert whole.headers["content-disposition"].startswith('attachment; filename="message-u1.txt"')
        assert whole.headers["x-content-type-options"] == "nosniff"
        foreign = http.get(f"/files/{sha}", headers={"origin": "http://evil.example"})
        assert foreign.status_code in (400, 403)  # the front door in front of it, as for every file


def test_a_planted_tool_result_over_the_bound_shows_its_preview_on_the_card_and_downloads_whole(
    run_app: AppRunner, tmp_path: Path
) -> None:
    text = planted_text(2 * TEXT_BOUND)  # bounded in the reading thread (under the size another process takes)
    data = text.encode("utf-8")
    a = {"conversation_id": "tool", "ts": stamp(T0), "attempt_id": "a1"}
    events: list[AnyEvent] = [
        Created(conversation_id="tool", ts=stamp(T0), title="Tool"),
        Submitted(conversation_id="tool", ts=stamp(T0), message_id="u1", turn=1, text="Dump the table."),
        Started(**a, message_id="m1", user_message_id="u1", turn=1, model="demo"),
        StepStarted(**a, step=1),
        ToolCalled(**a, step=1, call_id="k1", name="dump_table", arguments="{}"),
        ToolResult(**a, call_id="k1", status="ok", content=text, size=len(text)),
        Done(**a, request_id="r1"),
        Persisted(**a, message_id="m1", status="complete", text="Here it is."),
    ]
    folder = tmp_path / "data"
    write_tinydb_folder(folder, {"tool": events})
    with run_app(data=folder) as app, httpx.Client(base_url=app.url, timeout=60) as http:
        page = http.get("/chat/tool")
        found = re.findall(r"Showing the first [^\"<]*", page.text)
        assert page.status_code == 200 and found == [f"Showing the first 64 KB of {size_words(len(data))}"], found
        whole = http.get(f"/files/{hashlib.sha256(data).hexdigest()}")
        assert whole.status_code == 200 and whole.content == data
        assert whole.headers["content-disposition"].startswith('attachment; filename="dump_table-result-k1.txt"')
