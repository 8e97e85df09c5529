"""Share links seen by their owner, with NiceGUI's simulated user against the real test upstream (issue 36): the
audit panel lists each link as the ledger folds it (shared with its options, updated, revoked, opened N times),
and "Update the link" on the Shared links page makes the same address show the newer snapshot."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from nicegui import ui
from nicegui.testing import User

from ledger.events import ShareUpdated
from tests.support.page import click, elements, engine, last_answer, send
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until
from ui.chat_page import PAINTED

pytest_plugins = ["nicegui.testing.user_plugin"]


@pytest.fixture
def app_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, upstream: ScriptedUpstream) -> Iterator[ScriptedUpstream]:
    monkeypatch.setenv("LEDGERCHAT_MODEL", "openai/test-model")
    monkeypatch.setenv("LEDGERCHAT_API_BASE", upstream.base_url)
    monkeypatch.setenv("LEDGERCHAT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-share-audit-0123456789")
    monkeypatch.setenv("LEDGERCHAT_ALLOWED_HOSTS", "test")  # the simulated user's requests name host "test"
    yield upstream


@pytest.fixture
async def chat(app_env: ScriptedUpstream, user: User) -> User:
    user.javascript_rules[re.compile(re.escape(PAINTED))] = lambda _: PAINTED  # as a browser answers the round trip
    await user.open("/")
    return user


async def answered(user: User, upstream: ScriptedUpstream, question: str, answer: str) -> None:
    upstream.plan(Behavior(text=answer))
    await send(user, question)
    await wait_until(lambda: last_answer(user).status == "complete", 10, f"the answer to {question!r}")


async def share(user: User, *, tools: bool = False) -> str:
    """Share (personal mode's default audience: anyone with the link) and read the link the dialog shows once."""
    user.find(marker="share-button").click()
    if tools:
        user.find(marker="share-tools").click()
    await click(user, "Create link")
    (field,) = await wait_until(lambda: elements(user, marker="share-link"), 10, "the link in the dialog")
    url = str(field.value)
    assert "/s/" in url
    return "/s/" + url.rsplit("/s/", 1)[1]


def shown(user: User, words: str) -> bool:
    return any(words in str(e.text) for e in elements(user, kind=ui.label))


def kinds(cid: str) -> list[str]:
    return [e.KIND for e in engine().events(cid)]


def cid_of() -> str:
    (summary,) = engine().summaries()
    return summary.conversation_id


async def test_the_owners_audit_lists_a_share_link_with_its_options_opens_update_and_revoke(
    chat: User, upstream: ScriptedUpstream
) -> None:
    await answered(chat, upstream, "what to share", "The shared answer.")
    cid = cid_of()
    path = await share(chat, tools=True)
    await click(chat, "Close")
    chat.find(marker="audit-toggle").click()
    await wait_until(lambda: elements(chat, marker="audit-shares"), 10, "the share card in the audit panel")
    assert shown(chat, "open to anyone with the link, with tool details, without attachments, does not expire")
    assert shown(chat, "Not opened yet")
    for _ in range(2):
        got = await chat.http_client.get(path)
        assert got.status_code == 200 and "The shared answer." in got.text
    await wait_until(lambda: shown(chat, "Opened once"), 10, "the first open counted at once in the audit")
    assert kinds(cid).count("share_opened") == 1, "the second open of the minute waits to be gathered"

    await chat.open("/shares")
    await click(chat, "Update the link")
    await chat.should_see("The link now shows the chat as it is now.")
    await click(chat, "Revoke")
    await chat.should_see("Revoked: the link opens nothing any more.")
    assert (await chat.http_client.get(path)).status_code == 404
    assert [k for k in kinds(cid) if k.startswith("share_") and k != "share_opened"] == [
        "share_created",
        "share_updated",
        "share_revoked",
    ]

    await chat.open(f"/chat/{cid}")
    chat.find(marker="audit-toggle").click()
    await wait_until(lambda: shown(chat, "Revoked on "), 10, "the revoke in the audit panel")
    assert shown(chat, "Updated on ") and shown(chat, "Shared on ") and shown(chat, "Opened once")
    (card,) = elements(chat, marker="audit-share")
    assert card.props.get("data-share") in engine().conversation(cid).shares


async def test_update_the_link_makes_the_same_address_show_the_later_messages_with_a_newer_snapshot_date(
    chat: User, upstream: ScriptedUpstream
) -> None:
    await answered(chat, upstream, "first question", "The first answer.")
    cid = cid_of()
    path = await share(chat)
    await click(chat, "Close")
    await answered(chat, upstream, "second question", "The later answer.")
    before = await chat.http_client.get(path)
    assert "The first answer." in before.text and "The later answer." not in before.text, "a snapshot, not live"
    stamp = re.compile(r'data-snapshot="([^"]+)"')
    old = stamp.search(before.text)

    await chat.open("/shares")
    await click(chat, "Update the link")
    await chat.should_see("The link now shows the chat as it is now.")
    after = await chat.http_client.get(path)
    assert after.status_code == 200
    assert "second question" in after.text and "The later answer." in after.text, "the same link, the new snapshot"
    new = stamp.search(after.text)
    assert old is not None and new is not None and new.group(1) > old.group(1), "the snapshot's date moved on"
    events = engine().events(cid)
    [updated] = [e for e in events if isinstance(e, ShareUpdated)]
    later = [e for e in events if e.KIND == "persisted"][-1]
    assert updated.at_seq >= later.seq, "the new snapshot holds the later answer's end"
