"""The chat page with NiceGUI's simulated user, against the real test upstream (the release scenarios)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from nicegui import ui
from nicegui.testing import User

from engine.provider.light_route import ROUTE_VARIABLE
from tests.support.folders import fill, small_disk
from tests.support.page import (
    answer_html,
    answers,
    button,
    chat_list,
    click,
    elements,
    engine,
    last_answer,
    list_action,
    listed,
    send,
)
from tests.support.upstream import HOSTILE, Behavior, ScriptedUpstream
from tests.support.waiting import nothing_more_for, wait_until
from ui.assistant_message import LENGTH_CUT
from ui.chat_page import PAINTED

pytest_plugins = ["nicegui.testing.user_plugin"]
FAKE_KEY = "sk-test-page-0123456789abcdef"
WORDS = " ".join(f"w{n}" for n in range(300))


@pytest.fixture
def app_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, upstream: ScriptedUpstream) -> ScriptedUpstream:
    monkeypatch.setenv("LEDGERCHAT_MODEL", "openai/test-model")
    monkeypatch.setenv("LEDGERCHAT_API_BASE", upstream.base_url)
    monkeypatch.setenv("LEDGERCHAT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("LEDGERCHAT_IDLE_TIMEOUT", "1.0")
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.setenv("LEDGERCHAT_ALLOWED_HOSTS", "test")  # the simulated user's requests name host "test"
    return upstream


@pytest.fixture
async def chat(app_env: ScriptedUpstream, user: User) -> User:
    user.javascript_rules[re.compile(re.escape(PAINTED))] = lambda _: PAINTED  # as a browser answers the round trip
    await user.open("/")
    return user


def answer_text_in_ledger(cid: str) -> str:
    conv = engine().conversation(cid)
    assert conv is not None
    return conv.attempts[conv.messages[conv.message_ids[-1]].current_attempt_id or ""].text


def cid_of(user: User) -> str:
    (summary,) = engine().summaries()
    return summary.conversation_id


async def test_stop_right_after_sending_leaves_no_ghost_text_and_input_usable(
    chat: User, upstream: ScriptedUpstream
) -> None:
    upstream.plan(Behavior(text="GHOST " * 30, first_delay=1.5))
    await send(chat, "hello")
    await wait_until(lambda: len(upstream.records) == 1)
    await click(chat, "Stop")
    await wait_until(lambda: last_answer(chat).status == "empty")
    await nothing_more_for(1.8)  # past the upstream's first chunk: nothing may appear
    seen = last_answer(chat)
    assert "GHOST" not in seen.text and seen.status == "empty"
    assert any("Stopped before any text" in m for m in seen.markers)
    button(chat, "Retry")
    button(chat, "Send")
    upstream.plan(Behavior(text="fine"))
    await send(chat, "next question")
    await wait_until(lambda: last_answer(chat).status == "complete")
    assert [m["role"] for m in upstream.records[-1].messages] == ["user", "user"]


async def test_stop_mid_stream_keeps_the_visible_text_and_sends_exactly_it_next(
    chat: User, upstream: ScriptedUpstream
) -> None:
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.02))
    await send(chat, "count")
    await wait_until(lambda: len(last_answer(chat).text.split()) >= 8)
    await click(chat, "Stop")
    await wait_until(lambda: last_answer(chat).status == "interrupted")
    visible = last_answer(chat).text
    await nothing_more_for(1.0)
    assert last_answer(chat).text == visible, "text changed after Stop"
    assert any(m == "Stopped" for m in last_answer(chat).markers)
    assert upstream.records[-1].disconnected_at is not None and not upstream.records[-1].finished
    upstream.plan(Behavior(text="sure"))
    await send(chat, "expand on point 2")
    await wait_until(lambda: last_answer(chat).status == "complete")
    assert upstream.records[-1].messages[1] == {"role": "assistant", "content": visible}


async def test_retry_right_after_stop_shows_only_new_tokens_and_keeps_old_attempt_browsable(
    chat: User, upstream: ScriptedUpstream
) -> None:
    upstream.plan(Behavior(text="OLD " * 200, chunk_delay=0.02), Behavior(text="NEW " * 40, chunk_delay=0.005))
    await send(chat, "hi")
    await wait_until(lambda: "OLD" in last_answer(chat).text)
    await click(chat, "Stop")
    await wait_until(lambda: last_answer(chat).status == "interrupted")
    await click(chat, "Retry")
    await wait_until(lambda: last_answer(chat).status == "complete" and last_answer(chat).attempt == "2/2")
    assert "OLD" not in last_answer(chat).text and last_answer(chat).text.split() == ["NEW"] * 40
    chat.find(marker="attempt-prev").click()
    await wait_until(lambda: last_answer(chat).attempt == "1/2")
    assert last_answer(chat).status == "interrupted" and "NEW" not in last_answer(chat).text


async def test_an_answer_cut_at_the_length_limit_says_so_and_continue_goes_on_in_the_same_answer(
    chat: User, upstream: ScriptedUpstream
) -> None:
    upstream.plan(Behavior(text="The answer the limit cut", cut=True), Behavior(text=" short, then it ended."))
    await send(chat, "tell me all")
    await wait_until(lambda: last_answer(chat).status == "complete")
    assert LENGTH_CUT in last_answer(chat).markers
    shown = len(answers(chat))
    await click(chat, "Continue")
    await wait_until(lambda: last_answer(chat).attempt == "2/2" and last_answer(chat).status == "complete")
    continued = last_answer(chat)
    assert len(answers(chat)) == shown, "one answer, not a second bubble"
    assert continued.text == "The answer the limit cut\n\n short, then it ended."  # the prefix, then the rest
    assert "continued" in continued.markers and LENGTH_CUT not in continued.markers
    assert not [b for b in elements(chat, kind=ui.button, content="Continue") if b.visible], "it ended by itself"


async def test_a_late_chunk_from_an_old_request_is_not_rendered_and_shows_as_stale_in_the_audit(
    chat: User, upstream: ScriptedUpstream
) -> None:
    upstream.plan(Behavior(text="OLD " * 200, chunk_delay=0.02), Behavior(text="NEW " * 10))
    await send(chat, "hi")
    await wait_until(lambda: "OLD" in last_answer(chat).text)
    cid = cid_of(chat)
    old = engine().active_run(cid)
    await click(chat, "Stop")
    await wait_until(lambda: last_answer(chat).status == "interrupted")
    await click(chat, "Retry")
    await wait_until(lambda: last_answer(chat).status == "complete")
    assert old is not None
    old.receive("LATE TOKEN", "text")  # the old request's chunk reaches the one chunk gate late
    await nothing_more_for(0.3)
    assert all("LATE" not in a.text for a in answers(chat))
    chat.find(marker="audit-toggle").click()
    await wait_until(
        lambda: any(re.search(r"(^|\D)1 stale", str(e.text)) for e in elements(chat, marker="audit-counters"))
    )


@pytest.mark.parametrize("route", ["light", "litellm"])
@pytest.mark.parametrize("how", ["clean", "reset", "incomplete"])
async def test_network_drop_shows_a_readable_error_keeps_partial_and_retry_works(
    chat: User, upstream: ScriptedUpstream, how: str, route: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cut cleanly without the end marker (a proxy's idle timeout), reset, or mid-body: the same lost connection."""
    monkeypatch.setenv(ROUTE_VARIABLE, "litellm" if route == "litellm" else "auto")
    cut = Behavior(text="PARTIAL " * 50, drop_after=6, drop_how=how, chunk_delay=0.01)
    upstream.plan(cut, Behavior(text="recovered answer"))
    await send(chat, "hi")
    await wait_until(lambda: last_answer(chat).status == "failed")
    seen = last_answer(chat)
    assert seen.text.split() == ["PARTIAL"] * 6
    assert "Connection lost" in seen.markers and "not in context" in seen.markers
    assert not any("Traceback" in m or "litellm." in m for m in seen.markers)
    await click(chat, "Retry")
    await wait_until(lambda: last_answer(chat).status == "complete")
    assert last_answer(chat).text == "recovered answer"
    upstream.plan(Behavior(text="ok"))
    await send(chat, "follow up")
    await wait_until(lambda: last_answer(chat).status == "complete" and last_answer(chat).text == "ok")
    assert "PARTIAL" not in json.dumps(upstream.records[-1].messages)


async def test_leaving_and_coming_back_mid_stream_shows_the_whole_text_then_the_rest(
    chat: User, upstream: ScriptedUpstream
) -> None:
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.01))
    await send(chat, "long answer please")
    await wait_until(lambda: len(last_answer(chat).text.split()) >= 20)
    cid = cid_of(chat)
    shown = len(last_answer(chat).text.split())
    await chat.open("/")
    await wait_until(lambda: answer_text_in_ledger(cid).count(" ") > shown + 5, what="the stream going on while away")
    await chat.open(f"/chat/{cid}")
    first_seen = last_answer(chat).text
    assert first_seen.startswith("w0 w1 w2") and len(first_seen.split()) >= 20
    await wait_until(lambda: last_answer(chat).status == "complete", timeout=15)
    assert last_answer(chat).text == WORDS
    assert "cancel_requested" not in [e.KIND for e in engine().store.events(cid)]


async def test_deleting_a_chat_while_it_streams_removes_it_and_closes_upstream(
    chat: User, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.02))
    await send(chat, "stream then delete")
    await wait_until(lambda: len(last_answer(chat).text.split()) >= 3)
    cid = cid_of(chat)
    list_action(chat, "delete", cid)
    await wait_until(lambda: bool(elements(chat, marker="confirm-delete")))
    chat.find(marker="confirm-delete").click()
    await wait_until(lambda: engine().conversation(cid) is None)
    await wait_until(lambda: upstream.records[-1].disconnected_at is not None)
    await nothing_more_for(0.3)
    assert not upstream.records[-1].finished
    await engine().store.flush()
    assert not (tmp_path / "data" / f"conv-{cid}.json").exists()


async def test_two_tabs_on_one_chat_stream_the_same_text_and_stop_in_one_stops_both(
    app_env: ScriptedUpstream, create_user: Callable[[], User]
) -> None:
    upstream = app_env
    first, second = create_user(), create_user()
    await first.open("/")
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.02))
    await send(first, "shared")
    cid = cid_of(first)
    await second.open(f"/chat/{cid}")
    await wait_until(lambda: len(last_answer(second).text.split()) >= 5)
    await click(second, "Stop")
    await wait_until(lambda: last_answer(first).status == "interrupted" and last_answer(second).status == "interrupted")
    await wait_until(lambda: last_answer(first).text == last_answer(second).text, what="both tabs showing one text")
    await wait_until(lambda: upstream.records[-1].disconnected_at is not None, what="the upstream seeing the close")


async def test_a_chat_started_in_another_tab_appears_in_this_tabs_list_while_this_one_is_idle(
    app_env: ScriptedUpstream, create_user: Callable[[], User]
) -> None:
    upstream = app_env
    first, second = create_user(), create_user()
    await first.open("/")
    upstream.plan(Behavior(text="one"), Behavior(text="two"))
    await send(first, "the first chat")
    await wait_until(lambda: last_answer(first).status == "complete")
    await second.open("/")
    await send(second, "a chat from the other tab")
    await wait_until(lambda: listed(first) == ["a chat from the other tab", "the first chat"], what="the first list")
    assert last_answer(first).text == "one", "the first tab still shows its own chat"


async def test_hostile_model_output_is_shown_as_text_with_no_script_or_javascript_links(
    chat: User, upstream: ScriptedUpstream
) -> None:
    upstream.plan(Behavior(text=HOSTILE))
    await send(chat, "say something nasty")
    await wait_until(lambda: last_answer(chat).status == "complete")
    html = answer_html(chat)
    assert "&lt;script&gt;" in html and "<script" not in html
    assert "javascript:" not in html.replace('&lt;a href="javascript:', "")
    assert "<img" not in html and "onerror=" not in html.replace('onerror="window', "")


async def test_an_empty_or_blank_send_says_why_and_an_overlong_message_stays_in_the_box(
    chat: User, upstream: ScriptedUpstream
) -> None:
    chat.find("Message").trigger("keydown.enter.exact.prevent")
    await chat.should_see("Nothing to send: type a message")
    chat.find("Message").type("   \n  ")
    chat.find("Message").trigger("keydown.enter.exact.prevent")
    await nothing_more_for(0.1)
    assert not upstream.records and answers(chat) == []
    chat.find("Message").clear()
    long_text = "x" * 32_001
    chat.find("Message").type(long_text)
    chat.find("Message").trigger("keydown.enter.exact.prevent")
    await chat.should_see("the limit is 32,000")
    assert chat.find("Message").elements.pop().value == long_text
    assert not upstream.records


async def test_the_api_key_never_reaches_the_page_or_the_ledger(chat: User, upstream: ScriptedUpstream) -> None:
    upstream.plan(Behavior(status=401))
    await send(chat, "hi")
    await wait_until(lambda: last_answer(chat).status == "failed")
    cid = cid_of(chat)
    ledger = "".join(json.dumps(e.__repr__()) for e in engine().store.events(cid))
    page = json.dumps([str(el._props) + str(getattr(el, "text", "")) for el in chat.client.elements.values()])
    assert FAKE_KEY not in ledger and FAKE_KEY not in page
    assert "Not authorized (HTTP 401)" in last_answer(chat).markers


async def test_double_clicking_send_sends_one_message_and_does_not_stop_it(
    chat: User, upstream: ScriptedUpstream
) -> None:
    upstream.plan(Behavior(text="one whole answer", chunk_delay=0.05))
    chat.find("Message").type("only once")
    chat.find("Message").trigger("keydown.enter.exact.prevent")
    chat.find(marker="send").click()  # the second click of a double click lands on what is now "Stop"
    chat.find(marker="send").click()
    await wait_until(lambda: bool(answers(chat)) and last_answer(chat).status in ("complete", "interrupted", "empty"))
    assert last_answer(chat).status == "complete" and last_answer(chat).text == "one whole answer"
    assert len(upstream.records) == 1 and len(answers(chat)) == 1
    assert len(elements(chat, marker="user-message")) == 1


@pytest.fixture
def damaged_data(app_env: ScriptedUpstream, tmp_path: Path) -> Path:
    data = tmp_path / "data"
    data.mkdir(parents=True, exist_ok=True)
    (data / "conv-broken.json").write_text('{"events": {"1": {"seq": 1, "ts": "", "kind": "created", "title": "Sav')
    return data


async def test_a_damaged_ledger_file_is_reported_on_the_page_and_the_app_still_works(
    damaged_data: Path, user: User, upstream: ScriptedUpstream
) -> None:
    await user.open("/")
    await user.should_see("its file was damaged")
    assert list(damaged_data.glob("conv-broken.json.corrupt-*")), "the damaged original must be kept"
    upstream.plan(Behavior(text="still fine"))
    await send(user, "hello")
    await wait_until(lambda: last_answer(user).status == "complete")


@pytest.fixture
def small_data(app_env: ScriptedUpstream, tmp_path: Path) -> Iterator[Path]:
    """The app's data folder on a 256 KiB tmpfs, mounted before the app starts."""
    with small_disk(tmp_path / "data", 256) as data:
        yield data


def saving_banner(user: User) -> str | None:
    """The saving banner's text when it shows on this page, else None (the simulated user finds what is visible)."""
    shown = elements(user, marker="saving-reason")
    return str(shown[0].text) if shown else None


async def test_a_full_disk_shows_on_every_open_page_and_the_banner_goes_once_saving_works(
    small_data: Path, create_user: Callable[[], User], upstream: ScriptedUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    first, second = create_user(), create_user()
    await first.open("/")
    upstream.plan(Behavior(text="saved answer"))
    await send(first, "hello")
    await wait_until(lambda: last_answer(first).status == "complete")
    await second.open(f"/chat/{cid_of(first)}")
    assert saving_banner(first) is None and saving_banner(second) is None
    filler = fill(small_data)
    engine().rename(cid_of(first), "renamed while the disk is full")  # a write that fails
    full = "the disk is full"
    await wait_until(lambda: full in (saving_banner(first) or "") and full in (saving_banner(second) or ""))
    filler.unlink()
    await wait_until(lambda: saving_banner(first) is None and saving_banner(second) is None, timeout=5)
    assert [r.getMessage()[:27] for r in caplog.records if r.levelname == "ERROR"] == ["Saving fails: the disk is f"]
    caplog.clear()  # the one ERROR line this test causes on purpose (the simulated user fails a test on any)


async def test_esc_stops_the_answer_and_enter_never_does_it_queues_instead(
    chat: User, upstream: ScriptedUpstream
) -> None:
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.02))
    await send(chat, "count")
    await wait_until(lambda: len(last_answer(chat).text.split()) >= 3)
    chat.find("Message").type("typed while it streams")
    chat.find("Message").trigger("keydown.enter.exact.prevent")  # queues it (ui.queued), never stops
    await chat.should_see("Queued: sent as the next message when this answer completes.")
    assert last_answer(chat).status == "streaming"
    assert chat.find("Message").elements.pop().value == ""
    chat.find("Message").trigger("keydown.esc")
    await wait_until(lambda: last_answer(chat).status == "interrupted")
    await chat.should_see("Queue paused: the answer was stopped.")
    assert len(upstream.records) == 1


async def test_a_chat_renamed_on_the_page_is_listed_by_its_new_name_and_exported_with_the_rename(
    chat: User, upstream: ScriptedUpstream
) -> None:
    upstream.plan(Behavior(text="exported answer"))
    await send(chat, "first question")
    await wait_until(lambda: last_answer(chat).status == "complete")
    list_action(chat, "rename", cid_of(chat))
    chat.find("Name").clear().type("My renamed chat")
    chat.find(kind=ui.button, content="Save").click()
    await wait_until(lambda: listed(chat) == ["My renamed chat"])
    chat.find(marker="export").click()
    response = await chat.download.next()
    lines = [json.loads(line) for line in response.text.splitlines()]
    kinds = [line["kind"] for line in lines]
    assert kinds[:3] == ["created", "submitted", "started"] and "renamed" in kinds and kinds[-1] == "renamed"
    assert any(line["kind"] == "persisted" and line["text"] == "exported answer" for line in lines)
    assert FAKE_KEY not in response.text


async def test_the_list_shows_fifty_chats_then_more_on_demand_and_filters_by_title(chat: User) -> None:
    for n in range(60):
        engine().create_conversation(f"topic {n:02d}")
    await wait_until(lambda: len(listed(chat)) == 50)
    await chat.should_see("Show 10 more")
    chat.find(marker="more-chats").click()
    await wait_until(lambda: len(listed(chat)) == 60)
    assert sorted(listed(chat)) == [f"topic {n:02d}" for n in range(60)]
    assert not elements(chat, marker="more-chats")  # hidden: nothing more to show
    chat.find(marker="chat-filter").type("Topic 07")  # every word, in any case
    await wait_until(lambda: listed(chat) == ["topic 07"])
    chat.find(marker="chat-filter").clear().type("no such title")
    await wait_until(lambda: chat_list(chat).props["empty"] == "No chat has that in its title." and not listed(chat))


def shown_questions(user: User) -> list[str]:
    """The user messages the transcript shows, in page order (moved elements included)."""
    (column,) = elements(user, marker="messages")
    return [
        label.text
        for child in column.default_slot.children
        if "user-message" in child._markers
        for label in child.descendants()
        if isinstance(label, ui.label) and label.text.startswith("question")
    ]


async def test_a_long_chat_opens_on_its_last_messages_and_shows_earlier_ones_on_demand(
    chat: User, upstream: ScriptedUpstream
) -> None:
    for n in range(1, 13):
        upstream.plan(Behavior(text=f"answer {n}"))
        await send(chat, f"question {n}")
        await wait_until(lambda: last_answer(chat).status == "complete")
    assert shown_questions(chat) == [f"question {n}" for n in range(1, 13)]  # sent here: all stay on the page
    await chat.open(f"/chat/{cid_of(chat)}")
    await wait_until(lambda: shown_questions(chat) == [f"question {n}" for n in range(5, 13)])  # 16 messages
    chat.find(marker="show-earlier").click()
    await wait_until(lambda: shown_questions(chat) == [f"question {n}" for n in range(1, 13)])
    assert not elements(chat, marker="show-earlier")  # hidden: the whole chat is shown
    upstream.plan(Behavior(text="answer 13"))
    await send(chat, "question 13")
    await wait_until(lambda: shown_questions(chat) == [f"question {n}" for n in range(1, 14)])


async def test_a_list_action_for_a_chat_the_list_does_not_show_does_nothing(chat: User) -> None:
    shown = engine().create_conversation("shown")
    other = engine().create_conversation("other")
    chat.find(marker="chat-filter").type("shown")
    await wait_until(lambda: listed(chat) == ["shown"])
    list_action(chat, "delete", other)  # a forged event: the browser never showed this row
    await nothing_more_for(0.3)
    assert not elements(chat, marker="confirm-delete")
    list_action(chat, "delete", shown)
    await wait_until(lambda: bool(elements(chat, marker="confirm-delete")))


def live(user: User) -> list[str]:
    """The chats the list shows with the streaming dot."""
    return [row.conversation_id for row in chat_list(user).rows if row.live]


async def test_the_list_marks_a_chat_while_it_streams_and_only_then(chat: User, upstream: ScriptedUpstream) -> None:
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.01))
    await send(chat, "stream a while")
    await wait_until(lambda: live(chat) == [cid_of(chat)])
    await wait_until(lambda: last_answer(chat).status == "complete", timeout=15)
    await wait_until(lambda: not live(chat))
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.01))
    await send(chat, "and again")  # the same chat at the same place: its marker comes back without a rebuild
    await wait_until(lambda: live(chat) == [cid_of(chat)])
    await wait_until(lambda: last_answer(chat).status == "complete", timeout=15)
    await wait_until(lambda: not live(chat))


async def test_a_link_to_a_chat_that_never_existed_shows_a_notice_and_a_new_chat(chat: User) -> None:
    await chat.open("/chat/conv_never_was")
    await chat.should_see("That conversation does not exist (it may have been deleted).")
    await chat.should_see("Ask anything.")
    assert not engine().summaries()


async def test_a_questions_sent_time_is_when_it_was_sent_not_its_latest_retry_or_continue(
    chat: User, upstream: ScriptedUpstream
) -> None:
    upstream.plan(Behavior(text="first answer"), Behavior(text="second answer"))
    await send(chat, "when did I ask?")
    await wait_until(lambda: last_answer(chat).status == "complete")
    conv = engine().conversation(cid_of(chat))
    assert conv is not None
    asked = conv.messages[conv.message_ids[0]].ts

    def shown() -> str:
        (label,) = [e for e in elements(chat, marker="sent") if e.visible]
        return str(label.props["data-lc-time"])

    assert shown() == asked
    await click(chat, "Retry")
    await wait_until(lambda: last_answer(chat).text == "second answer" and last_answer(chat).status == "complete")
    latest = engine().conversation(cid_of(chat))
    assert latest is not None
    retried = latest.attempts[latest.messages[latest.message_ids[-1]].current_attempt_id or ""]
    assert retried.metrics is not None and retried.metrics.sent_at != asked
    assert shown() == asked, "the question's time moved to the Retry's"
