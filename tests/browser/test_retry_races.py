"""Regenerate races in the browser (lobehub #10076, #10075, #10508: the answer vanishes, an empty message is saved,
later turns disappear): randomized sequences of Retry, double-clicked Retry, Stop and Retry pressed in two tabs at
once, on one chat open in two tabs, within milliseconds of each other and of the answer's end or error.

The engine's property (``tests/engine/test_retry_races.py``, 50 sequences) holds the rule for every interleaving;
this is its sample through the real page: clicks as a person makes them, two sockets, the page's own guards.
After every sequence, from the ledger: one new attempt per Retry it accepted (``retrying``), each attempt ended
once, each attempt's text from its own request only (every request's words carry their own tag), a complete
attempt never empty; on the page: both tabs show the ledger's last attempt ("n/n") and its words. At the end the
next question is answered with the ledger's text as history. ``RETRY_SAMPLES=n`` runs n sequences (default 3); the
run prints what the presses made (attempts, Stops that landed, how the attempts ended).
"""

from __future__ import annotations

import os
import random
import re
import time
from collections import Counter

from playwright.sync_api import Page, expect

from tests.support.app_process import AppProcess
from tests.support.browser import ANSWER, Pages, conversation_id, last_answer, send, visible_words
from tests.support.upstream import Behavior, ScriptedUpstream

SAMPLES = int(os.environ.get("RETRY_SAMPLES", "3"))
ACTIONS = ("retry", "retry", "double", "two_tabs", "stop", "stop", "stop_then_retry", "wait")
ENDED = ("complete", "interrupted", "failed", "empty")
OUTCOME = 30_000  # ms any answer may take to end on a loaded machine (a liveness limit)
QUIET = 0.5  # seconds: the ledger is settled when two reads this far apart are the same

# the press, made in the page as a finger makes it: on whatever the last answer shows now, never waiting for it
PRESS = """([label, times]) => {
  const named = (root) => [...root.querySelectorAll('button')].filter(
    (b) => b.getAttribute('aria-label') === label || b.innerText.trim().endsWith(label));
  const answer = [...document.querySelectorAll('.lc-assistant')].pop();
  const b = (answer && named(answer).pop()) || named(document).pop();
  for (let i = 0; b && i < times; i++) b.click();
  return !!b;
}"""


# Stop is armed 600 ms after it replaces Send (issue 41: a finger still pressing Send never stops the answer): a
# Stop press waits for that, or for the answer to end, as a person sees Stop turn red and presses it
ARMED = """() => { const s = document.querySelector('button[data-lc-send]');
  return !s || s.getAttribute('aria-disabled') !== 'true'
    || [...document.querySelectorAll('.lc-assistant')].pop()?.dataset.status !== 'streaming'; }"""


PRESSES: Counter[str] = Counter()  # what the presses found: a button, or nothing to press (hidden, or disarmed)


def press(page: Page, label: str, times: int = 1) -> bool:
    if label == "Stop":
        page.wait_for_function(ARMED, timeout=OUTCOME)
    found = bool(page.evaluate(PRESS, [label, times]))
    PRESSES[f"{label} {'pressed' if found else 'not there'}"] += 1
    return found


def planned(upstream: ScriptedUpstream, tag: str, rng: random.Random) -> None:
    """Enough answers for any sequence's presses; each request's words carry its own tag (``{tag}q{n}w{k}``)."""
    upstream.reset()
    behaviors = []
    for n in range(12):
        text = " ".join(f"{tag}q{n}w{k}" for k in range(rng.randint(3, 60)))
        if rng.random() < 0.2:  # a lost connection after a few words: a Retry within milliseconds of an error
            behaviors.append(Behavior(text=text, chunk_delay=0.01, drop_after=rng.randint(1, 3)))
        else:
            behaviors.append(Behavior(text=text, chunk_delay=rng.choice((0.005, 0.02, 0.05))))
    upstream.plan(*behaviors)


def act(a: Page, b: Page, action: str, rng: random.Random) -> None:
    page = rng.choice((a, b))
    match action:
        case "retry":
            press(page, "Retry")
        case "double":
            press(page, "Retry", times=2)
        case "two_tabs":
            press(a, "Retry")
            press(b, "Retry")
        case "stop":
            press(page, "Stop")
        case "stop_then_retry":
            press(page, "Stop")
            press(rng.choice((a, b)), "Retry")
        case "wait":
            page.wait_for_timeout(rng.choice((5, 50, 200, 600)))  # the timing under test: a press near the end
    page.wait_for_timeout(rng.choice((0, 5, 30, 150, 400)))  # presses within ms, or once the page answered


def settled(page: Page) -> None:
    expect(last_answer(page)).to_have_attribute("data-status", re.compile("|".join(ENDED)), timeout=OUTCOME)


def quiet_ledger(app: AppProcess, cid: str) -> list[dict]:
    """The conversation's events once every attempt has ended and nothing more was written for ``QUIET`` seconds
    (a named "nothing more appears" window: a press the server had not handled yet would start an attempt)."""
    before: list[dict] = []
    deadline = time.monotonic() + OUTCOME / 1000
    while time.monotonic() < deadline:
        events = app.export(cid)
        ended = sum(e["kind"] == "started" for e in events) == sum(e["kind"] == "persisted" for e in events)
        if ended and events == before:
            return events
        before = events if ended else []
        time.sleep(QUIET)
    raise AssertionError(f"the ledger never settled: {[e['kind'] for e in before][-12:]}")


def check(app: AppProcess, cid: str, pages: tuple[Page, Page]) -> str:
    """The ledger's rules after a sequence; the last attempt's text."""
    events = quiet_ledger(app, cid)
    started = [e for e in events if e["kind"] == "started"]
    ends = {e["attempt_id"]: e for e in events if e["kind"] == "persisted"}
    retries = [e for e in events if e["kind"] == "retrying"]
    assert len(started) == 1 + len(retries), "one new attempt per accepted Retry"
    assert sorted(ends) == sorted(e["attempt_id"] for e in started), "every attempt ended, once"
    assert sum(e["kind"] == "persisted" for e in events) == len(ends), "no attempt ended twice"
    for attempt in started:
        end = ends[attempt["attempt_id"]]
        words = end["text"].split()
        assert len({w.rsplit("w", 1)[0] for w in words}) <= 1, f"one request's words only: {words[:8]}"
        assert end["status"] != "complete" or words, "a complete attempt is never empty"
    last = ends[started[-1]["attempt_id"]]
    for page in pages:
        expect(last_answer(page)).to_have_attribute("data-attempt", f"{len(started)}/{len(started)}")
        expect(last_answer(page)).to_have_attribute("data-status", last["status"])
        assert visible_words(page) == last["text"].split(), "the tab shows the ledger's last attempt"
    return str(last["text"])


def test_random_retry_stop_and_double_click_sequences_from_two_tabs_keep_one_attempt_per_retry_and_lose_nothing(
    open_page: Pages, app: AppProcess, upstream: ScriptedUpstream
) -> None:
    a = open_page(app)
    rng = random.Random(40)
    planned(upstream, "s0", rng)
    send(a, "tell me something")
    cid = conversation_id(a)
    b = open_page(app, f"/chat/{cid}")
    for n in range(SAMPLES):
        settled(a)
        planned(upstream, f"s{n + 1}", rng)
        for action in rng.choices(ACTIONS, k=rng.randint(2, 5)):
            act(a, b, action, rng)
        for page in (a, b):
            settled(page)
        text = check(app, cid, (a, b))
        assert a.locator(ANSWER).count() == b.locator(ANSWER).count() == 1, "no turn appeared or vanished"
    events = app.export(cid)
    ended = Counter(e["status"] for e in events if e["kind"] == "persisted")
    stops = sum(e["kind"] == "cancel_requested" for e in events)
    made = 1 + sum(e["kind"] == "retrying" for e in events)
    print(f"\n{SAMPLES} sequences: {dict(PRESSES)}; {made} attempts, {stops} Stops recorded, {ended}")
    upstream.reset()
    upstream.plan(Behavior(text="The next answer."))
    send(b, "and then?")
    expect(last_answer(b)).to_have_attribute("data-status", "complete", timeout=OUTCOME)
    said = [m["content"] for m in upstream.last.messages if m["role"] == "assistant"]
    assert said == [text] or [s.split() for s in said] == [text.split()], "the history is the last attempt's text"
