"""Two real app processes on a throwaway PostgreSQL that is restarted, stopped and frozen under them (issue 27,
"Must show" (a)-(d)): after each restart the first Send on each instance is written and answered (never silently
lost); an answer whose 8 s tool call spans a restart ends once, with the tool's real result, and the model is not
asked again; an owner frozen past its lease comes back to find the survivor's end standing (it writes nothing
after it, its upstream is closed, both tabs agree, a follow-up from either instance sends the survivor's text);
once every answer ended no owner row is left in ``attempt_owners``; a database that does not answer refuses a Send
in a sentence, keeps the text, shows the saving banner, and the banner goes away by itself when it answers again.
The cluster is this module's own: restarting it never touches the session's database. Budget: 2 min.

What is timed here is the scenario (how long the database stays down, when a Send comes, how long an owner is
frozen); every wait for an outcome is a liveness limit (``OUTCOME``), not a promise: the lease's seconds are
measured with nothing else running in ``test_pg_cluster.py``'s solo tests. So this module runs in the parallel
phase, first (``mark.early``: its two minutes are mostly waiting, beside the other workers' tests).
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from playwright.sync_api import Page, expect

from app.cluster import LEASE
from tests.support.app_runner import AppRunner
from tests.support.browser import Pages, conversation_id, last_answer, send, visible_words, wait_words
from tests.support.instances import AppsOnOneDatabase
from tests.support.postgres import PostgresCluster
from tests.support.tools import demo_server_config, server_record
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream
from tests.support.waiting import idle_for, nothing_more_for_blocking, wait_until_blocking

pytestmark = pytest.mark.early  # two minutes of mostly waiting: started first (tests/conftest.py)
OUTCOME = 60.0  # seconds any outcome may take to show under a loaded machine (a liveness limit, never a bound)
WORDS = [f"w{n}" for n in range(2500)]  # 50 s at 20 ms a word: the upstream is still sending when the owner wakes
# (a shorter answer may be sent whole into the frozen owner's socket buffers: then there is nothing left to close)
IDLE_AFTER_RESTART = (0.0, 0.3, 1.0, 2.0, 3.5)  # seconds the database is healthy and idle before the Sends
TOOL_SECONDS = 8
TOOL_GAPS = (1.5, 1.5, 0.0, 1.5)  # seconds between the five Sends of answers with a tool call
RESTART_BEFORE = 3  # the restart comes right before the fourth Send: 3 s and 1.5 s into the first two tool calls,
# as the third starts, just before the fourth answer and 1.5 s before the fifth
# per round of freezing: how long after the survivor's end the frozen owner resumes, and how long each stream runs
# once the other instance shows it before the next begins or the owner freezes (the last: hardly at all)
FREEZES = ((0.0, (1.2, 0.6, 0.0)), (1.5, (0.9, 0.5, 0.1)))


@pytest.fixture(scope="module")
def tool_record(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("faults-tools") / "record.jsonl"


@pytest.fixture(scope="module")
def pair(faulty: PostgresCluster, run_app: AppRunner, tool_record: Path) -> Iterator[AppsOnOneDatabase]:
    """A and B on one database of the faulty cluster, each running the demo tool server (stdio MCP)."""
    server = demo_server_config(tool_record)
    config = tool_record.parent / "mcp.json"
    entry = {"command": server.command, "args": list(server.args), "cwd": server.cwd, "env": server.env}
    config.write_text(json.dumps({"mcpServers": {"demo": entry}}))
    url = faulty.new_database()
    with run_app.together(2, "--database-url", url, "--mcp-config", str(config)) as (a, b):
        yield AppsOnOneDatabase(url, a, b, ())


def owner_rows(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM attempt_owners").fetchone()
    return int(row[0]) if row else -1


def written_by(writer: str) -> int:
    return int(writer.split(":")[1])


def answered(page: Page, text: str) -> None:
    expect(last_answer(page)).to_have_attribute("data-status", "complete", timeout=OUTCOME * 1000)
    expect(last_answer(page)).to_contain_text(text)


def test_after_each_restart_of_the_database_the_first_send_on_each_instance_is_written_and_answered(
    faulty: PostgresCluster, pair: AppsOnOneDatabase, open_page: Pages, upstream: ScriptedUpstream
) -> None:
    on_a, on_b = open_page(pair.a), open_page(pair.b)
    for n, idle in enumerate(IDLE_AFTER_RESTART):
        faulty.restart()
        idle_for(idle)
        for name, page in (("A", on_a), ("B", on_b)):
            upstream.plan(Behavior(text=f"answer {n} from {name}"))
            send(page, f"question {n} on {name}")  # the Send is taken at once: its answer's element appears
            answered(page, f"answer {n} from {name}")
            assert page.get_by_label("Message").input_value() == "", "the box empties once the submit is recorded"
    wait_until_blocking(lambda: owner_rows(pair.url) == 0, timeout=OUTCOME, what="every owner row released")
    for process in (pair.a, pair.b):
        kinds = [e["kind"] for e in process.export()]
        assert kinds.count("submitted") == kinds.count("persisted"), "every Send written and its answer ended"


def test_answers_whose_tool_call_spans_a_restart_end_once_with_the_tools_real_result_and_ask_the_model_no_more(
    faulty: PostgresCluster, pair: AppsOnOneDatabase, open_page: Pages, upstream: ScriptedUpstream, tool_record: Path
) -> None:
    upstream.reset()
    calls = [f"call_r{n}" for n in range(len(TOOL_GAPS) + 1)]
    upstream.plan(
        *[Behavior(text="Starting.", tool_calls=[PlannedCall("slow_task", f'{{"seconds": {TOOL_SECONDS}}}', c)])
          for c in calls]
    )  # fmt: skip
    upstream.after_tool_results = Behavior(text="The job finished.")  # each answer's step after its tool call
    pages = [open_page(pair.a) for _ in calls]
    for n, page in enumerate(pages):
        if n == RESTART_BEFORE:
            faulty.restart()
        send(page, f"run job {n}")
        expect(page.locator(f"[data-tool-call='{calls[n]}']")).to_have_attribute("data-tool-status", "running")
        idle_for(TOOL_GAPS[n] if n < len(TOOL_GAPS) else 0.0)
    for page in pages:
        expect(last_answer(page)).to_have_attribute("data-status", "complete", timeout=OUTCOME * 1000)
    nothing_more_for_blocking(LEASE)  # a sweep by B would come within a lease
    asked = [(r.status, [m["role"] for m in r.messages], r.messages[0]["content"]) for r in upstream.records]
    assert len(asked) == 2 * len(calls), f"each answer: the step that called the tool and the one after: {asked}"
    for page in pages:
        expect(last_answer(page)).to_contain_text("The job finished.")
    finished = [r for r in server_record(tool_record) if r["event"] == "slow_task_finished"]
    assert len(finished) >= len(calls), "every tool call really ran to its end on A's tool server"
    for page in pages:
        rows = pair.rows(conversation_id(page))
        kinds = [k for k, _, _ in rows]
        assert kinds.count("persisted") == 1 and "recovered" not in kinds, kinds
        assert not [k for k in kinds if k.startswith("stale")], "nothing late: A owned the answer throughout"
        results = [p for k, _, p in rows if k == "tool_result"]
        assert [(r["status"], r["content"]) for r in results] == [("ok", "The slow task finished after 8 s.")]
        assert {written_by(w) for _, w, _ in rows} == {pair.a.pid}, "B never wrote into A's answer"
    wait_until_blocking(lambda: owner_rows(pair.url) == 0, timeout=OUTCOME, what="every owner row released")


@pytest.mark.parametrize(("resume_after", "runs_for"), FREEZES, ids=["resumed-at-once", "resumed-later"])
def test_owners_frozen_past_their_lease_come_back_to_the_survivors_end_and_write_nothing_after_it(
    pair: AppsOnOneDatabase, open_page: Pages, upstream: ScriptedUpstream, resume_after: float,
    runs_for: tuple[float, ...],
) -> None:  # fmt: skip
    a, b = pair.a, pair.b
    upstream.reset()
    on_a = [open_page(a) for _ in runs_for]
    on_b: list[Page] = []
    for n, (page, gap) in enumerate(zip(on_a, runs_for, strict=True)):
        upstream.plan(Behavior(text=" ".join(WORDS), chunk_delay=0.02))
        send(page, f"story {n}, whose server freezes")
        on_b.append(open_page(b, f"/chat/{conversation_id(page)}"))
        wait_words(on_b[-1], 1)  # its start is durable: B can know what it finalizes
        idle_for(gap)
    cids = [conversation_id(page) for page in on_a]
    records = list(upstream.records)
    os.kill(a.pid, signal.SIGSTOP)
    try:
        for page in on_b:
            expect(last_answer(page)).to_have_attribute("data-status", "interrupted", timeout=OUTCOME * 1000)
        idle_for(resume_after)
    finally:
        os.kill(a.pid, signal.SIGCONT)
    closed = lambda: all(r.disconnected_at is not None for r in records)  # noqa: E731
    said = lambda: [(r.chunks_sent, r.finished, r.disconnected_at) for r in records]  # noqa: E731
    wait_until_blocking(closed, timeout=OUTCOME, what=f"A's upstreams closed (as the wait began: {said()})")
    for page in on_a:
        expect(last_answer(page)).to_have_attribute("data-status", "interrupted", timeout=OUTCOME * 1000)
    nothing_more_for_blocking(1.0)
    texts = []
    for cid, page_a, page_b in zip(cids, on_a, on_b, strict=True):
        rows = pair.rows(cid)
        ended = max(n for n, (kind, _, _) in enumerate(rows) if kind == "persisted")
        assert [k for k, _, _ in rows][ended - 1 : ended + 1] == ["recovered", "persisted"]
        assert written_by(rows[ended][1]) == b.pid, "the survivor wrote the end"
        after = rows[ended + 1 :]
        assert not [k for k, w, _ in after if written_by(w) == a.pid], "A wrote nothing after B's end"
        assert [k for k, _, _ in after] == [k for k, _, _ in after if k.startswith("stale")]
        text = rows[ended][2]["text"]
        assert text.split() == WORDS[: len(text.split())], "the survivor's end is a prefix of what was sent"
        assert visible_words(page_a) == visible_words(page_b) == text.split(), "both tabs show the survivor's end"
        texts.append(text)
    for page, text in ((on_a[0], texts[0]), (on_b[1], texts[1])):  # a follow-up from A, and one from B
        upstream.plan(Behavior(text="Follow-up answered."))
        send(page, "and then?")
        answered(page, "Follow-up answered.")
        history = upstream.last.messages
        assert [m["content"] for m in history if m["role"] == "assistant"][-1].split() == text.split()
    wait_until_blocking(lambda: owner_rows(pair.url) == 0, timeout=OUTCOME, what="no owner row left")


def test_a_database_that_does_not_answer_refuses_a_send_in_a_sentence_and_the_banner_clears_when_it_answers(
    faulty: PostgresCluster, pair: AppsOnOneDatabase, open_page: Pages, upstream: ScriptedUpstream
) -> None:
    page = open_page(pair.a)
    upstream.reset()
    faulty.down()
    try:
        box = page.get_by_label("Message")
        box.fill("a question while the database is down")
        box.press("Enter")
        expect(page.get_by_text("Your message was not sent")).to_be_visible(timeout=OUTCOME * 1000)
        expect(box).to_have_value("a question while the database is down")
        banner = page.locator(".lc-danger[role=alert]")  # the saving banner, on every page of the instance
        expect(banner).to_be_visible()
        expect(banner).to_contain_text("Saving is paused: the database cannot be reached")
        assert not upstream.records, "nothing went to the model"
    finally:
        faulty.up()
    expect(banner).to_be_hidden(timeout=OUTCOME * 1000)
    upstream.plan(Behavior(text="Answered once it was back."))
    box.press("Enter")
    answered(page, "Answered once it was back.")
    expect(box).to_have_value("")
