"""Issue 35 on two instances on PostgreSQL, each with a Chromium tab: a session made on one works on the other
(the session records are in the database, not in a process), and a disabled account is out on both within
2 s, its running answer (owned by one of them) ending interrupted with source ``account``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from tests.support.app_runner import AppRunner
from tests.support.browser import Pages, conversation_id, load, send, wait_words
from tests.support.instances import AppsOnOneDatabase
from tests.support.people import add_account, sign_in, users
from tests.support.postgres import PostgresCluster
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until_blocking


@pytest.fixture(scope="module")
def team(pg_cluster: PostgresCluster, run_app: AppRunner) -> Iterator[AppsOnOneDatabase]:
    url = pg_cluster.new_database()
    with run_app.together(2, "--database-url", url, "--accounts", "local") as (a, b):
        yield AppsOnOneDatabase(url, a, b, ())


def test_a_session_made_on_one_instance_works_on_the_other_and_a_disabled_account_is_out_on_both(
    team: AppsOnOneDatabase, open_page: Pages, upstream: ScriptedUpstream
) -> None:
    add_account(team.a, "eve", database_url=team.url)
    on_a = sign_in(open_page(None), team.a, "eve")
    on_b = on_a.context.new_page()  # the same browser: its cookie (made on A; a cookie is per host, not port)
    on_b.set_default_timeout(30_000)
    load(on_b, team.b.url + "/")  # opens B: no sign-in page
    upstream.plan(Behavior(text=" ".join(f"w{n}" for n in range(2000)), chunk_delay=0.02))
    send(on_a, "a long story")
    cid = conversation_id(on_a)
    team.holding(cid)
    load(on_b, f"{team.b.url}/chat/{cid}")
    wait_words(on_b, 10)
    record = upstream.last
    done = users(team.a, "disable", "eve", database_url=team.url)
    assert done.returncode == 0, done.stderr
    for page in (on_a, on_b):  # 2 s: every instance re-reads the sessions in use each second
        expect(page.get_by_label("Username")).to_be_visible(timeout=4_000)
    wait_until_blocking(lambda: record.disconnected_at is not None, 10, "the upstream closed")
    wait_until_blocking(
        lambda: any(k == "cancelled" for k, _, _ in team.rows(cid)), 10, "the attempt's end in the ledger"
    )
    sources = [p["source"] for k, _, p in team.rows(cid) if k in ("cancel_requested", "cancelled")]
    assert set(sources) == {"account"}, sources


def test_a_stop_pressed_on_the_other_instance_is_recorded_as_that_persons_where_the_answer_runs(
    team: AppsOnOneDatabase, open_page: Pages, upstream: ScriptedUpstream
) -> None:
    add_account(team.a, "fay", database_url=team.url)
    on_a = sign_in(open_page(None), team.a, "fay")
    on_b = on_a.context.new_page()
    on_b.set_default_timeout(30_000)
    upstream.plan(Behavior(text=" ".join(f"w{n}" for n in range(2000)), chunk_delay=0.02))
    send(on_a, "a long story")  # it runs on A
    cid = conversation_id(on_a)
    team.holding(cid)
    load(on_b, f"{team.b.url}/chat/{cid}")
    wait_words(on_b, 10)
    on_b.get_by_role("button", name="Stop").click()  # B relays the cancel to A, which records it
    wait_until_blocking(
        lambda: any(k == "cancelled" for k, _, _ in team.rows(cid)), 10, "the attempt's end in the ledger"
    )
    [asked] = [p for k, _, p in team.rows(cid) if k == "cancel_requested"]
    assert (asked["source"], asked["actor"]) == ("user", "local:fay")
    assert asked["requested_by"], "recorded where the answer runs, on the other instance's behalf"
