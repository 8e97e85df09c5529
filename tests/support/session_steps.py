"""The steps of the reducer's random sessions (``tests.support.random_sessions``): each a hypothesis strategy of a
tuple that names what happens next in the conversation, then the small ids and choices it needs.

``STEPS`` holds one strategy per step by name (the queue's own come from ``tests.support.queue_steps``); ``steps``
draws any one of them, so ``st.lists(steps)`` is a random session. A new event kind gets a step here (made into
events by ``tests.support.random_sessions.build_events``), or is listed in ``tests/ledger/test_reducer.py``'s
``NOT_IN_SESSIONS``.
"""

from __future__ import annotations

from typing import get_args

from hypothesis import strategies as st

from ledger.events import CancelSource
from tests.support.queue_steps import QUEUE_STEPS
from tests.support.server_steps import SERVER_STEPS
from tests.support.share_steps import SHARE_STEPS

# One step of a random session, by name: what happens next, with small ids so that steps collide often.
STEPS = {
    "submit": st.tuples(st.just("submit"), st.integers(0, 2)),
    "retry": st.tuples(st.just("retry"), st.integers(0, 2)),
    "chunk": st.tuples(st.just("chunk"), st.integers(0, 7)),
    "late_chunk": st.tuples(st.just("late_chunk"), st.integers(0, 7)),
    "stale": st.tuples(st.just("stale"), st.integers(0, 7)),
    "cancel": st.tuples(
        st.just("cancel"),
        st.integers(0, 7),
        st.sampled_from(get_args(CancelSource)),  # every source, "account" too
    ),
    "cancelled": st.tuples(st.just("cancelled"), st.integers(0, 7)),
    "fail": st.tuples(st.just("fail"), st.integers(0, 7), st.booleans()),
    "done": st.tuples(st.just("done"), st.integers(0, 7)),
    "persist": st.tuples(st.just("persist"), st.integers(0, 7)),
    "recover": st.tuples(st.just("recover"), st.integers(0, 7)),
    "select": st.tuples(st.just("select"), st.integers(0, 2), st.integers(0, 7)),
    "next_step": st.tuples(st.just("next_step"), st.integers(0, 7)),
    "call_started": st.tuples(st.just("call_started"), st.integers(0, 7), st.integers(0, 2)),
    "call_complete": st.tuples(st.just("call_complete"), st.integers(0, 7), st.integers(0, 2)),
    "dispatch": st.tuples(st.just("dispatch"), st.integers(0, 7), st.integers(0, 2)),
    "tool_result": st.tuples(
        st.just("tool_result"),
        st.integers(0, 7),
        st.integers(0, 2),
        st.sampled_from(["ok", "error", "cancelled", "not_run", "declined", "unknown"]),
    ),
    "stale_result": st.tuples(st.just("stale_result"), st.integers(0, 7), st.integers(0, 2)),
    "edit": st.tuples(st.just("edit"), st.integers(0, 7)),
    "select_version": st.tuples(st.just("select_version"), st.integers(0, 7)),
    "upstream_closed": st.tuples(st.just("upstream_closed"), st.integers(0, 7)),
    "step_finished": st.tuples(st.just("step_finished"), st.integers(0, 7)),
    "awaiting_approval": st.tuples(st.just("awaiting_approval"), st.integers(0, 7), st.integers(0, 2)),
    "progress": st.tuples(st.just("progress"), st.integers(0, 7), st.integers(0, 2)),
    "approval_asked": st.tuples(
        st.just("approval_asked"), st.integers(0, 7), st.integers(0, 2), st.sampled_from(["ask", "once"])
    ),
    "approval_given": st.tuples(
        st.just("approval_given"),
        st.integers(0, 7),
        st.integers(0, 2),
        st.sampled_from(["run", "skip"]),
        st.sampled_from(["once", "chat", "server"]),
        st.sampled_from(["user", "grant", "stop"]),
    ),
    "grant_revoked": st.tuples(st.just("grant_revoked"), st.integers(0, 2)),
    "detach": st.tuples(st.just("detach"), st.integers(0, 7)),
    "attach": st.tuples(st.just("attach"), st.integers(0, 7)),
    "branch": st.tuples(st.just("branch"), st.integers(0, 7)),
    "question": st.tuples(st.just("question"), st.integers(0, 7), st.integers(0, 2), st.integers(0, 2)),
    "answer": st.tuples(
        st.just("answer"),
        st.integers(0, 7),
        st.integers(0, 2),
        st.integers(0, 1),
        st.sampled_from(["accept", "decline", "cancel"]),
        st.sampled_from(["user", "stop", "restart", "app"]),
    ),
    **QUEUE_STEPS,
    "compact": st.tuples(st.just("compact"), st.integers(0, 7), st.booleans()),
    "title": st.tuples(st.just("title"), st.integers(0, 7)),  # a chat's title made by the model (ledger.titles)
    "titled": st.tuples(st.just("titled"), st.integers(0, 7), st.booleans()),
    "continue": st.tuples(st.just("continue"), st.integers(0, 7)),
    **SHARE_STEPS,
    **SERVER_STEPS,
}
steps = st.one_of(*STEPS.values())


LATEST = -1  # an attempt index ``build_events`` reads modulo the attempts so far: the latest attempt


@st.composite
def _turn(draw: st.DrawFn, first: bool = False) -> list[tuple]:
    """One attempt's life, start to (maybe) end, on the latest attempt: chunks, a tool call with any outcome (its
    approval or question on the way), then done, a Stop, a failure, a restart's recovery, or nothing yet."""
    opener = ("submit", 0) if first else draw(st.sampled_from([("submit", 0), ("retry", LATEST), ("continue", LATEST)]))
    plan: list[tuple] = [opener, *[("chunk", LATEST)] * draw(st.integers(0, 3))]
    if draw(st.booleans()):
        plan += [("call_started", LATEST, 0), ("call_complete", LATEST, 0)]
        plan += draw(st.sampled_from([[], [("approval_asked", LATEST, 0, "ask")], [("question", LATEST, 0, 0)]]))
        plan += draw(
            st.sampled_from([[], [("dispatch", LATEST, 0)], [("dispatch", LATEST, 0), ("progress", LATEST, 0)]])
        )
        if draw(st.booleans()):
            plan.append(("tool_result", LATEST, 0, draw(STEPS["tool_result"])[3]))
        if draw(st.booleans()):
            plan += [("step_finished", LATEST), ("next_step", LATEST), ("chunk", LATEST)]
    source = draw(STEPS["cancel"])[2]
    plan += draw(
        st.sampled_from(
            [
                [("done", LATEST), ("persist", LATEST)],
                [("cancel", LATEST, source), ("upstream_closed", LATEST), ("cancelled", LATEST), ("persist", LATEST)],
                [("cancel", LATEST, source), ("chunk", LATEST)],
                [("fail", LATEST, False), ("persist", LATEST)],
                [("fail", LATEST, True), ("chunk", LATEST)],
                [("recover", LATEST), ("persist", LATEST)],
                [],
            ]
        )
    )
    return plan


#: Random sessions that reach the ends: a first question, then attempt lives (``_turn``: a new question, a Retry
#: or a Continue of the latest) and, one part in four, any other step between them.
lived_sessions = st.tuples(
    _turn(first=True), st.lists(st.one_of(_turn(), _turn(), _turn(), steps.map(lambda s: [s])), max_size=6)
).map(lambda parts: [*parts[0], *(step for part in parts[1] for step in part)])
