"""Issue 36 in real Chromium, in team mode (``--accounts local``, prices from ``--model-info``): a member over the
small limit an admin set (``main.py users limit``) is refused with the figure and the reset time, the text staying
in the box, and deleting the chat does not bring them under it (its spend is shown "from a deleted chat"); an
admin's usage page shows every person's spend and sets a person's limit; a member's ``/usage.csv`` holds only
their rows, and ``?everyone=1`` answers them as an unknown address. The tests follow one another on the module's
one app (ben's spend, made in the first, is what the admin sees in the second).
"""

from __future__ import annotations

import csv
import io
import json

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.support.app_process import AppProcess
from tests.support.browser import Pages, conversation_id, last_answer, send
from tests.support.people import add_account, sign_in, users
from tests.support.upstream import Behavior, ScriptedUpstream

MODEL = "openai/test-model"  # the scripted upstream's (tests.support.app_process), priced here only
SENTENCE = "You have spent $0.02 of your $0.015 daily limit; it resets at 00:00 UTC."
TWO_CENTS = Behavior(text="An answer that cost two cents.", input_tokens=2000)


@pytest.fixture(scope="module")
def app_options(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, ...]:
    path = tmp_path_factory.mktemp("model-info") / "models.json"
    path.write_text(json.dumps({MODEL: {"input_cost_per_token": 1e-5, "output_cost_per_token": 0.0}}))
    return ("--accounts", "local", "--model-info", str(path))


@pytest.fixture(scope="module", autouse=True)
def accounts(app: AppProcess) -> None:
    add_account(app, "ann", admin=True)
    for name in ("ben", "cat"):
        add_account(app, name)
    done = users(app, "limit", "ben", "$0.015/day")
    assert done.returncode == 0, done.stderr


def cookies(page: Page) -> dict[str, str]:
    return {c["name"]: c["value"] for c in page.context.cookies()}


def answered(page: Page, upstream: ScriptedUpstream, text: str) -> str:
    upstream.plan(TWO_CENTS)
    send(page, text)
    expect(last_answer(page)).to_have_attribute("data-status", "complete")
    return conversation_id(page)


def test_a_member_over_their_limit_is_refused_with_the_figure_and_the_reset_time_even_after_deleting_the_chat(
    app: AppProcess, open_page: Pages, upstream: ScriptedUpstream
) -> None:
    ben = sign_in(open_page(None), app, "ben")
    cid = answered(ben, upstream, "a first question")
    requests = len(upstream.records)
    box = ben.get_by_label("Message")
    box.fill("a second question")
    box.press("Enter")
    expect(ben.get_by_text(SENTENCE)).to_be_visible()
    expect(box).to_have_value("a second question")  # the text stays the person's
    assert len(upstream.records) == requests, "no request made"

    ben.locator(f"[data-conversation='{cid}']").get_by_role("button", name="Delete").click()
    ben.get_by_role("dialog").get_by_role("button", name="Delete").click()
    expect(ben.locator(f"[data-conversation='{cid}']")).to_have_count(0)
    ben.goto(app.url + "/")
    ben.wait_for_function("() => window.did_handshake === true")
    ben.get_by_label("Message").fill("in a new chat")
    ben.get_by_label("Message").press("Enter")
    expect(ben.get_by_text(SENTENCE)).to_be_visible()  # deleting the chat kept what it spent
    assert len(upstream.records) == requests

    ben.goto(app.url + "/usage")
    expect(ben.locator("[data-deleted='yes']")).to_contain_text("from a deleted chat")
    expect(ben.get_by_text("Your limit: $0.015/day. Spent today: $0.020", exact=False)).to_be_visible()


def test_an_admins_usage_page_shows_every_persons_spend_and_sets_a_persons_limit(
    app: AppProcess, open_page: Pages, upstream: ScriptedUpstream
) -> None:
    cat = sign_in(open_page(None), app, "cat")
    answered(cat, upstream, "cat's question")
    ann = sign_in(open_page(None), app, "ann")
    ann.get_by_role("button", name="Account: ann").click()
    ann.get_by_text("Usage", exact=True).click()
    people = ann.locator("[data-person]")
    expect(ann.locator("[data-person='local:cat']")).to_contain_text("$0.020 in 1 requests")
    expect(ann.locator("[data-person='local:ben']")).to_contain_text("$0.020 in 1 requests")  # a deleted chat's too
    assert people.count() == 3, "everyone's default, ben and cat"
    field = ann.get_by_label("Spend limit of local:ben")
    expect(field).to_have_value("$0.015/day")
    field.fill("$1/day")
    ann.get_by_role("button", name="Save the limit of local:ben").click()
    expect(ann.get_by_text("Saved: it holds from the next request")).to_be_visible()
    assert users(app, "limit", "ben").stdout.strip() == "ben: $1/day"
    ben = sign_in(open_page(None), app, "ben")
    answered(ben, upstream, "under the new limit")  # holds at the next request


def test_a_members_usage_csv_holds_only_their_rows_and_everyones_is_not_found_for_them(
    app: AppProcess, open_page: Pages
) -> None:
    cat, ann = sign_in(open_page(None), app, "cat"), sign_in(open_page(None), app, "ann")
    with httpx.Client(base_url=app.url, cookies=cookies(cat)) as as_cat:
        mine = as_cat.get("/usage.csv")
        assert mine.status_code == 200 and mine.headers["content-type"].startswith("text/csv")
        rows = list(csv.DictReader(io.StringIO(mine.text)))
        assert rows and {r["person"] for r in rows} == {"local:cat"}
        refused = as_cat.get("/usage.csv?everyone=1")
        assert refused.status_code == 404 and refused.text == "There is nothing at this address."
    with httpx.Client(base_url=app.url, cookies=cookies(ann)) as as_ann:
        everyone = list(csv.DictReader(io.StringIO(as_ann.get("/usage.csv?everyone=1").text)))
    assert {r["person"] for r in everyone} >= {"local:ben", "local:cat"}
    assert {r["deleted"] for r in everyone if r["person"] == "local:ben"} >= {"yes"}
