"""Tool cards with whole results, with NiceGUI's simulated user: the real app (``main.py``) on the scripted
upstream, the demo MCP server over stdio as its tool server; what the page holds for each part is read from its
elements (what the browser is sent)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from nicegui import ui
from nicegui.testing import User
from nicegui.testing.user_interaction import UserInteraction

from ledger.events.approval import ApprovalGiven, GrantRevoked
from ledger.events.core import ToolResult
from tests.support.page import elements, engine, send
from tests.support.tools import demo_tools_app_env
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream
from tests.support.waiting import wait_until
from ui.chat_page import PAINTED

pytest_plugins = ["nicegui.testing.user_plugin"]


@pytest.fixture
def app_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, upstream: ScriptedUpstream) -> ScriptedUpstream:
    """The app's settings, set before the ``user`` fixture starts it: the demo tool server as its one server."""
    # 2025-11-25: the revision whose tools can declare ``execution.taskSupport`` (the withheld-tool test needs it)
    demo_tools_app_env(monkeypatch, tmp_path, upstream, "sk-test-tool-card-0123456789", protocol="2025-11-25")
    return upstream


@pytest.fixture
async def chat(app_env: ScriptedUpstream, user: User) -> User:
    user.javascript_rules[re.compile(re.escape(PAINTED))] = lambda _: PAINTED
    await user.open("/")
    return user


def card(user: User, call_id: str) -> ui.element:
    (found,) = (e for e in elements(user, marker="tool-card") if e.props.get("data-call-id") == call_id)
    return found


def inside(root: ui.element, marker: str) -> list[ui.element]:
    return [e for e in root.descendants() if marker in e._markers]


def labels(root: ui.element) -> list[str]:
    return [e.text for e in root.descendants() if isinstance(e, ui.label)]


async def test_a_rich_result_shows_its_image_audio_resource_link_and_structured_content_on_the_card(
    chat: User, upstream: ScriptedUpstream
) -> None:
    calls = [
        PlannedCall("draw_chart", '{"title": "<b>Load</b>"}', "call_img"),
        PlannedCall("notes_file", "{}", "call_res"),
        PlannedCall("beep", "{}", "call_wav"),
    ]
    upstream.plan(Behavior(text="Looking.", tool_calls=calls), Behavior(text="Here they are."))
    await send(chat, "show me everything")
    statuses = lambda: [e.props.get("data-status") for e in elements(chat, marker="tool-card")]  # noqa: E731
    await wait_until(lambda: statuses() == ["done", "done", "done"], 20, "the three cards done")
    got = {e.call_id: e for e in engine().events(engine().summaries()[0].conversation_id) if isinstance(e, ToolResult)}
    image_sha = next(p.sha256 for p in got["call_img"].parts if p.kind == "image")
    audio_sha = next(p.sha256 for p in got["call_wav"].parts if p.kind == "audio")

    image_card = card(chat, "call_img")
    assert image_card.props["data-tool-call"] == "call_img" and image_card.props["data-tool-status"] == "done"
    (image,) = inside(image_card, "tool-image")
    assert image.tag == "img" and image.props["src"] == f"/files/{image_sha}/thumb"
    assert image.props["alt"].startswith("Image, 320×200")
    (link,) = inside(image_card, "tool-image-link")
    assert link.props["href"] == f"/files/{image_sha}"
    (structured,) = inside(image_card, "tool-structured")
    shown = structured.text
    assert json.loads(shown) == {"title": "<b>Load</b>", "unit": "requests", "values": json.loads(shown)["values"]}
    assert '\n  "title": "<b>Load</b>"' in shown  # pretty, and the tool's markup stays text in a label

    resource_card = card(chat, "call_res")
    (resource,) = inside(resource_card, "tool-resource")
    assert resource.props["data-uri"] == "file:///demo/notes.md"
    assert resource.props["label"] == "file:///demo/notes.md · text/markdown" and resource.value is False  # collapsed
    (text,) = inside(resource_card, "tool-resource-text")
    assert text.text.startswith("# Retries\nRetry only what is safe to repeat")
    (chip,) = inside(resource_card, "tool-link")
    assert chip.props["data-uri"] == "file:///demo/notes.md" and "file:///demo/notes.md" in labels(chip)
    assert not [e for e in chip.descendants() if e.props.get("href")]  # shown, never a link to fetch

    (player,) = inside(card(chat, "call_wav"), "tool-audio")
    assert (player.tag, player.props["src"], player.props["preload"]) == ("audio", f"/files/{audio_sha}", "none")
    for root in (image_card, resource_card):  # nothing from the tool is markup: no HTML or markdown element at all
        assert not [e for e in root.descendants() if isinstance(e, ui.html | ui.markdown)]
        sources = [str(e.props.get(k)) for e in root.descendants() for k in ("src", "href") if e.props.get(k)]
        assert all(s.startswith("/files/") for s in sources), sources


async def test_the_tools_panel_names_a_task_required_tool_that_is_not_offered_and_why(
    chat: User, upstream: ScriptedUpstream
) -> None:
    await wait_until(lambda: elements(chat, marker="tool-withheld"), 20, "the server's tools listed")
    (withheld,) = elements(chat, marker="tool-withheld")
    assert withheld.props["data-withheld-tool"] == "batch_report"
    assert withheld.text.startswith("batch_report: needs MCP task-augmented calls")
    assert "not offered to the model" in withheld.text


REASON = "outdated and wrong " * 20  # 380 characters: longer than a row, shown whole when opened


def status(user: User, call_id: str) -> str | None:
    found = [e for e in elements(user, marker="tool-card") if e.props.get("data-call-id") == call_id]
    return found[0].props.get("data-status") if found else None


def buttons(root: ui.element) -> dict[str, ui.element]:
    return {str(e.props.get("aria-label")): e for e in root.descendants() if e.tag == "q-btn"}


async def test_the_waiting_card_shows_every_argument_why_it_asks_and_how_long_and_allow_in_this_chat_is_listed(
    chat: User, upstream: ScriptedUpstream
) -> None:
    arguments = json.dumps({"title": "Caching", "reason": REASON, "tags": ["old", "notes"]})
    upstream.plan(
        Behavior(text="", tool_calls=[PlannedCall("delete_note", arguments, "call_del")]), Behavior(text="Deleted.")
    )
    await send(chat, "delete the caching note")
    await wait_until(lambda: status(chat, "call_del") == "waiting", 20, "the card waiting for approval")
    box = card(chat, "call_del")
    (why,) = inside(box, "tool-approval-why")
    assert why.text == "Asks every time: the tool says it may change or delete things."
    (waited,) = inside(box, "tool-waited")
    assert waited.props["data-lc-since"].startswith("20")  # counted in the browser from when it began waiting
    (shown,) = inside(box, "tool-approval-arguments")
    assert {"title:", '"Caching"', "tags:", json.dumps(["old", "notes"])} <= set(labels(shown))
    (long,) = inside(box, "tool-long-argument")
    assert long.props["label"] == f"reason · {len(REASON)} characters" and long.value is False
    assert REASON in labels(long), "the long value is there whole, collapsed"
    names = buttons(box)
    assert {"Run", "Skip", "Always allow delete_note in this chat", "Always allow delete_note on this server"} <= set(
        names
    )

    allow = "Always allow delete_note in this chat"
    UserInteraction(chat, {names[allow]}, allow).click()
    await wait_until(lambda: status(chat, "call_del") == "done", 20, "the call run")
    (answer,) = inside(card(chat, "call_del"), "tool-approval-answer")
    assert answer.text == "Run, in this chat by you"
    await wait_until(lambda: elements(chat, marker="grant-revoke"), 10, "the grant listed in the Tools panel")
    (row,) = [e for e in elements(chat, marker="tool-grants")[0].descendants() if e.props.get("data-grant")]
    assert (row.props["data-grant"], row.props["data-tool"]) == ("chat", "delete_note")

    (revoke,) = elements(chat, marker="grant-revoke")
    assert revoke.props["aria-label"] == "Revoke: always allow delete_note in this chat"
    UserInteraction(chat, {revoke}, "Revoke").click()
    cid = engine().summaries()[0].conversation_id
    await wait_until(lambda: any(isinstance(e, GrantRevoked) for e in engine().events(cid)), 10, "grant_revoked")
    await wait_until(lambda: not elements(chat, marker="grant-revoke"), 10, "the grant gone from the panel")
    assert [(g.decision, g.scope) for g in engine().events(cid) if isinstance(g, ApprovalGiven)] == [("run", "chat")]
