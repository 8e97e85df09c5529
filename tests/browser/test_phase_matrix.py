"""Every phase of an agent turn × Stop, a switch away and back, a reload and a frozen tab, in real Chromium (issue 40,
"switching chats, reloading or backgrounding the tab loses the answer or leaves a spinner", LibreChat #13335, lobehub
#16762; "Stop that does not stop", cherry-studio #7589, vercel/ai #6502).

Each cell brings a new chat into its phase (the scripted upstream holds it there for seconds), checks that the phase
still held when the action began, and waits for the end: the page's status and text are the ledger's (its
``/export``), a Stop closed the model's request and no model request started after it, and a follow-up is accepted
by the strict upstream with the previous answer in its history exactly as the ledger keeps it. A frozen tab is a
background tab the browser froze: its scripts paused (the debugger) while the server goes on, then resumed.
The test run holds Stop at every phase and, in turn, one of the other three actions at every other phase (12 cells:
a cell costs about 3.9 s of CPU, and the suite has 12 minutes on 2 cores); ``MATRIX=all`` runs all 32 cells, and
``MATRIX=all MATRIX_REPEAT=5 pytest tests/browser/test_phase_matrix.py`` each five times (the record in issue 40).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from demo.answers import is_title_request
from demo.behavior import last_user
from tests.support.app_process import AppProcess
from tests.support.browser import conversation_id, last_answer, send, wait_words
from tests.support.tools import demo_tools_options
from tests.support.upstream import Behavior, PlannedCall, RequestRecord, ScriptedUpstream
from tests.support.waiting import nothing_more_for_blocking, wait_until_blocking

HOLD = 2.5  # seconds the upstream or the tool holds a phase: room for the action inside it
IN_FLIGHT = ("first_chunk", "streaming", "arguments", "between", "compacting")  # a model request is open there
FROZEN = 1.0  # seconds a tab stays frozen while a call waits for a person (a phase that never ends by itself)
WORDS = " ".join(f"w{n}" for n in range(120))
PHASES = ("first_chunk", "streaming", "arguments", "tool_running", "between", "person", "compacting", "titling")
ACTIONS = ("stop", "switch", "reload", "frozen")
STOPPED = re.compile(r"^(interrupted|empty)$")  # a Stop before any text leaves an empty answer
REPEAT = int(os.environ.get("MATRIX_REPEAT", "1"))
CELLS = [
    (phase, action)
    for n, phase in enumerate(PHASES)
    for action in ACTIONS
    if os.environ.get("MATRIX") == "all" or action == "stop" or (n % 2 == 0 and action == ACTIONS[1 + n // 2 % 3])
]


@pytest.fixture(scope="module")
def app_options(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, ...]:
    return (*demo_tools_options(tmp_path_factory.mktemp("matrix")), "--titles", "model")


def card(page: Page, call_id: str):  # a Locator
    return page.locator(f"[data-tool-call='{call_id}']")


def model_requests(upstream: ScriptedUpstream) -> list[RequestRecord]:
    """The requests for answers and summaries (titles are asked on the side, after a chat's first answer)."""
    return [r for r in upstream.records if not is_title_request(last_user(r.messages))]


def arrived(upstream: ScriptedUpstream, count: int) -> None:
    """Wait until the upstream has received ``count`` requests for answers or summaries in this cell."""
    wait_until_blocking(lambda: len(model_requests(upstream)) >= count, timeout=30, what=f"{count} model requests")


def enter(page: Page, upstream: ScriptedUpstream, phase: str) -> Callable[[], bool]:
    """Bring a new chat into ``phase``; returns what says the phase still holds (checked right before the action
    begins: the cell is only meaningful if the action met the phase)."""
    upstream.titles = Behavior(text='"Matrix cell"', chunk_delay=0.0)
    if phase == "first_chunk":
        upstream.plan(Behavior(text=WORDS, first_delay=HOLD, chunk_delay=0.002))
        send(page, "wait for it")
        arrived(upstream, 1)
        return lambda: upstream.last.chunks_sent == 0
    if phase == "streaming":
        upstream.plan(Behavior(text=WORDS, chunk_delay=HOLD / 120))
        send(page, "stream it")
        wait_words(page, 3)
        return lambda: not upstream.last.finished
    if phase == "arguments":
        arguments = json.dumps({"expression": "1 + " * 45 + "1"})
        upstream.plan(
            Behavior(
                text="Computing.",
                tool_calls=[PlannedCall("calculator", arguments, "c_args", pieces=100)],
                chunk_delay=HOLD / 100,
            ),
            Behavior(text=WORDS, chunk_delay=0.002),
        )
        send(page, "compute it")
        expect(card(page, "c_args")).to_have_attribute("data-tool-status", "writing")
        return lambda: not upstream.records[-1].finished
    if phase in ("tool_running", "between"):
        seconds = HOLD if phase == "tool_running" else 0
        upstream.plan(
            Behavior(
                text="Starting.", tool_calls=[PlannedCall("slow_task", json.dumps({"seconds": seconds}), "c_run")]
            ),
            Behavior(text=WORDS, first_delay=0 if phase == "tool_running" else HOLD, chunk_delay=0.002),
        )
        send(page, "run the task")
        if phase == "tool_running":
            expect(card(page, "c_run")).to_have_attribute("data-tool-status", "running")
            return lambda: len(model_requests(upstream)) == 1
        expect(card(page, "c_run")).to_have_attribute("data-tool-status", "done")
        arrived(upstream, 2)
        return lambda: model_requests(upstream)[-1].chunks_sent == 0
    if phase == "person":
        upstream.plan(
            Behavior(text="Deleting.", tool_calls=[PlannedCall("delete_note", '{"title": "Old"}', "c_ask")]),
            Behavior(text=WORDS, chunk_delay=0.002),
        )
        send(page, "delete the old note")
        expect(card(page, "c_ask")).to_have_attribute("data-tool-status", "waiting")
        return lambda: len(model_requests(upstream)) == 1
    if phase == "titling":
        upstream.titles = Behavior(text='"Matrix cell"', first_delay=HOLD)
    for turn in ("a first question", "a second question")[: 1 if phase == "titling" else 2]:  # one to summarize
        upstream.plan(Behavior(text=f"An answer to {turn}.", chunk_delay=0.0))
        send(page, turn)
        expect(last_answer(page)).to_have_attribute("data-status", "complete")
    if phase == "titling":
        titles = lambda: [r for r in upstream.records if is_title_request(last_user(r.messages))]  # noqa: E731
        wait_until_blocking(titles, timeout=30, what="the title request")
        return lambda: not titles()[-1].finished
    upstream.plan(Behavior(text="**Earlier turns** summarized.", first_delay=HOLD, chunk_delay=0.0))
    page.get_by_role("button", name="Compact: summarize earlier turns").click()
    expect(page.locator(".lc-compaction")).to_have_attribute("data-status", "streaming")
    arrived(upstream, 3)
    return lambda: model_requests(upstream)[-1].chunks_sent == 0


def act(page: Page, app: AppProcess, phase: str, action: str, cid: str, held: Callable[[], bool]) -> None:
    """Do ``action``; it starts while the phase still holds (said, not assumed: on a busy machine it may be gone)."""
    assert held(), f"the phase had passed before the {action}"
    if (phase, action) == ("titling", "stop"):  # nothing to stop: a title is asked on the side, Send stays
        expect(page.get_by_role("button", name="Stop")).to_have_count(0)
        expect(page.get_by_role("button", name="Send")).to_be_visible()
    elif action == "stop":
        page.get_by_role("button", name="Stop").click()
    elif action == "switch":
        page.get_by_role("button", name="New chat").click()
        page.wait_for_url(app.url + "/")
    elif action == "reload":
        page.reload()
    else:
        cdp = page.context.new_cdp_session(page)
        cdp.send("Debugger.enable")
        cdp.send("Debugger.pause")
    if action == "switch":
        page.locator(f"[data-conversation='{cid}']").get_by_role("link").click()
        page.wait_for_url(f"**/chat/{cid}")
    elif action == "frozen":  # frozen until the server has left the phase (a waiting call: for FROZEN seconds)
        if phase == "person":
            nothing_more_for_blocking(FROZEN)
        else:
            wait_until_blocking(lambda: not held(), timeout=30, what="the phase to pass while the tab is frozen")
        cdp.send("Debugger.resume")
        cdp.detach()


def settle(page: Page, phase: str, action: str) -> None:
    """The phase's own end: a waiting call answered (Run) unless stopped; then the answer (or summary) ends."""
    ended = STOPPED if action == "stop" and phase != "titling" else "complete"
    if phase == "person" and action != "stop":
        expect(card(page, "c_ask")).to_have_attribute("data-tool-status", "waiting")
        card(page, "c_ask").get_by_role("button", name="Run", exact=True).click()
    if phase == "compacting":
        expect(page.locator(".lc-compaction")).to_have_attribute("data-status", ended)
    else:
        expect(last_answer(page)).to_have_attribute("data-status", ended)
    if phase == "titling":
        expect(page.locator(".lc-chat-title")).to_have_text("Matrix cell")


def ledger_answer(page: Page, app: AppProcess, cid: str) -> tuple[str, str]:
    """The status and text the ledger holds for the chat's last answer (its persisted end)."""
    events = [json.loads(line) for line in page.request.get(f"{app.url}/export/{cid}").text().splitlines()]
    answers = {e["attempt_id"] for e in events if e["kind"] == "started" and e.get("purpose", "answer") == "answer"}
    last = [e for e in events if e["kind"] == "persisted" and e["attempt_id"] in answers][-1]
    return last["status"], last.get("text", "")


@pytest.mark.parametrize("repeat", range(REPEAT), ids=lambda n: f"run{n + 1}")
@pytest.mark.parametrize(("phase", "action"), CELLS, ids=[f"{phase}-{action}" for phase, action in CELLS])
def test_each_phase_of_a_turn_meets_stop_a_switch_a_reload_and_a_frozen_tab_with_page_ledger_and_upstream_agreeing(
    page: Page, app: AppProcess, upstream: ScriptedUpstream, phase: str, action: str, repeat: int
) -> None:
    held = enter(page, upstream, phase)
    cid = conversation_id(page)
    before = len(model_requests(upstream))
    act(page, app, phase, action, cid, held)
    settle(page, phase, action)
    if action == "stop" and phase != "titling":
        stopped = model_requests(upstream)[-1]
        if phase in IN_FLIGHT:  # the Stop closed the open request; a tool running or a person waited for: none open
            wait_until_blocking(lambda: stopped.disconnected_at is not None, timeout=30, what="the request closed")
        else:
            assert stopped.finished, "the model's request was still open during the tool or the wait"
        assert len(model_requests(upstream)) == before, "a model request started after Stop"
    status, text = ledger_answer(page, app, cid)
    expect(last_answer(page)).to_have_attribute("data-status", status)
    shown = "".join(last_answer(page).locator(".lc-md").all_inner_texts())
    assert "".join(shown.split()) == "".join(text.split()), "the page shows other words than the ledger"
    upstream.plan(Behavior(text="A follow-up answer.", chunk_delay=0.0))
    send(page, "and then?")
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    follow_up = model_requests(upstream)[-1]
    assert follow_up.status == 200
    said = "".join(m["content"] for m in follow_up.messages if m.get("role") == "assistant" and m.get("content"))
    assert "".join(text.split()) in "".join(said.split()), "the follow-up's history lost the answer's words"
