"""A tool that returns 3 MB of text (``tests.support.question_server``'s ``long_report``), with NiceGUI's simulated
user on the real app (``main.py``) and the scripted upstream: the ledger records its preview and the blob of the
whole, the card shows the preview with how much of it that is and a download of the whole, and the model's next
request carries it within ``--tool-result-chars`` with a note that counts the whole."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from nicegui import ui
from nicegui.testing import User

from ledger.bounds import PREVIEW_BYTES, preview
from ledger.events.core import ToolResult
from store.blobs import FolderBlobs, read_text
from tests.support.page import elements, engine, send
from tests.support.question_server import long_report_text
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream
from tests.support.waiting import wait_until
from ui.attachments import size_words
from ui.chat_page import PAINTED

pytest_plugins = ["nicegui.testing.user_plugin"]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def app_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, upstream: ScriptedUpstream) -> ScriptedUpstream:
    config = tmp_path / "tools.json"
    server = {"command": sys.executable, "args": ["-m", "tests.support.question_server"], "cwd": str(ROOT),
              "protocol": "2025-11-25", "approval": "run"}  # fmt: skip
    config.write_text(json.dumps({"mcpServers": {"reports": server}}))
    monkeypatch.setenv("LEDGERCHAT_MODEL", "openai/test-model")
    monkeypatch.setenv("LEDGERCHAT_API_BASE", upstream.base_url)
    monkeypatch.setenv("LEDGERCHAT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("LEDGERCHAT_MCP_CONFIG", str(config))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-long-result-0123456789")
    monkeypatch.setenv("LEDGERCHAT_ALLOWED_HOSTS", "test")
    return upstream


async def test_a_tool_result_of_3_mb_is_shown_as_its_preview_with_a_download_and_sent_within_the_limit(
    app_env: ScriptedUpstream, user: User, tmp_path: Path
) -> None:
    user.javascript_rules[re.compile(re.escape(PAINTED))] = lambda _: PAINTED
    await user.open("/")
    app_env.plan(
        Behavior(text="", tool_calls=[PlannedCall("long_report", '{"kilobytes": 3072}', "call_r")]),
        Behavior(text="It is long."),
    )
    await send(user, "the report, please")
    the_engine = engine()
    cid = next(iter(the_engine.read.state.conversations))
    await wait_until(lambda: not the_engine.is_streaming(cid), 30, "the turn to end")
    text = long_report_text(3072)
    (result,) = [e for e in the_engine.events(cid) if isinstance(e, ToolResult)]
    assert result.whole is not None and result.content == preview(text) and result.size == len(text)
    assert read_text(FolderBlobs(tmp_path / "data" / "blobs"), result.whole) == text

    (line,) = [e for e in elements(user, marker="whole-text")]
    assert [e.text for e in line.descendants() if isinstance(e, ui.label)] == [
        f"Showing the first {size_words(len(result.content.encode()))} of {size_words(len(text.encode()))}"
    ]
    (link,) = [e for e in line.descendants() if isinstance(e, ui.link)]
    assert link.props["href"] == f"/files/{result.whole.sha256}"
    assert len(result.content.encode()) <= PREVIEW_BYTES

    (sent,) = [m for m in app_env.last.messages if m.get("role") == "tool"]
    limit = the_engine.settings.limits.tool_result_chars
    assert sent["content"].startswith(text[:limit])
    assert sent["content"].endswith(f"[… {len(text) - limit:,} more characters cut; the full result is in the ledger]")
