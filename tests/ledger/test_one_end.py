"""One end per attempt (``ledger.ends``, docs/ledger.md) with two writers over the same attempt ids, checked with
hypothesis: the attempt's owner, paused anywhere and maybe resumed, and a sweeper that finalized it meanwhile.

Each turn's attempt gets an owner script (started, chunks, maybe a failed request re-sent, maybe a tool step with a
real result, a terminal, persisted) and a sweeper batch (``unknown`` for a dispatched call without a result,
``not_run`` for a complete one never dispatched, recovered, persisted; read and written at once, as under the
sweep's take-over). The owner pauses at a random point; its tail is dropped, interleaved with the sweeper's batch,
or arrives after everything else. Seqs are assigned in arrival order. On replay, what the rule promises is
derived here from the events alone (the first end in seq order, then the first persisted), not from
``ledger.ends``.
"""

from __future__ import annotations

from dataclasses import fields, replace

from hypothesis import given, settings
from hypothesis import strategies as st
from immutables import Map

from demo.agent import history_problem
from ledger.ends import UNKNOWN_OUTCOME
from ledger.events.core import (
    EVENT_CLASSES,
    AnyEvent,
    ApprovalAsked,
    ApprovalGiven,
    Cancelled,
    CancelRequested,
    Chunk,
    Done,
    Failed,
    Persisted,
    Recovered,
    RequestSent,
    StaleChunk,
    Started,
    StepFinished,
    StepStarted,
    Submitted,
    ToolCalled,
    ToolCallStarted,
    ToolDispatched,
    ToolProgress,
    ToolResult,
    TurnMetrics,
    UpstreamClosed,
)
from ledger.folds.audit import audit
from ledger.history import as_messages, model_history
from ledger.reducer import reduce, replay
from ledger.state import EMPTY_STATE, TERMINAL_STATUSES, ConversationState
from ledger.summary import summarize, summary_of
from tests.support.ledger_builders import ts
from tests.support.random_sessions import CONV, build_events
from tests.support.session_steps import steps
from ui.audit_words import audit_counters, phase_detail, phase_label
from ui.format import tool_state_words
from ui.tool_card import ICONS, card_status

C = "c1"
STALE_KINDS = {"chunk", "stale_chunk", "stale_tool_result"}
#: The kinds of one attempt's run: every kind with a (required) ``attempt_id`` but ``retrying`` and ``selected``.
KINDS = {cls.KIND for cls in EVENT_CLASSES if any(f.name == "attempt_id" and f.type == "str" for f in fields(cls))} - {
    "retrying",
    "selected",
}
COUNTED_ONLY = {"tool_call_started", "tool_progress"}  # late events the audit counts without a timeline entry
OWNER = TurnMetrics(sent_at="owner")
SWEEPER = TurnMetrics(sent_at="sweeper")

turn_plans = st.fixed_dictionaries(
    {
        "chunks_before": st.integers(0, 3),
        "resent": st.booleans(),
        "tool": st.booleans(),
        "approval": st.booleans(),  # the call waited for a person's Run first (issue 22)
        "piece": st.booleans(),
        "chunks_after": st.integers(0, 3),
        "terminal": st.sampled_from(["done", "failed", "cancelled"]),
        "pause": st.floats(0, 1),
        "resume": st.sampled_from(["no", "interleaved", "at_end"]),
        "where": st.floats(0, 1),
    }
)


def is_end(event: AnyEvent) -> bool:
    """A terminal (or a persisted): what ends an attempt, written here apart from ``ledger.ends``."""
    if isinstance(event, Failed):
        return not event.will_retry
    return isinstance(event, Done | Cancelled | Recovered | Persisted)


def owner_script(k: int, plan: dict) -> list[AnyEvent]:
    att, msg = f"a{k}", f"m{k}"
    ids = {"conversation_id": C, "attempt_id": att}
    out: list[AnyEvent] = [
        Started(**ids, message_id=msg, user_message_id=f"u{k}", turn=k + 1, model="x"),
        StepStarted(**ids, step=1),
        RequestSent(**ids, request_id=f"{att}-r0", model="x"),
    ]
    request, n, text, answered = f"{att}-r0", 0, "", False

    def chunks(count: int) -> None:
        nonlocal n, text
        for _ in range(count):
            out.append(Chunk(**ids, request_id=request, chunk_seq=n, text=f"<{att}:{n}>"))
            text += f"<{att}:{n}>"
            n += 1

    if plan["resent"]:
        out.append(Failed(**ids, request_id=request, error_type="server", summary="503", will_retry=True))
        request = f"{att}-r1"
        out.append(RequestSent(**ids, request_id=request, model="x"))
    chunks(plan["chunks_before"])
    step = 1
    if plan["tool"]:
        call = f"{att}-c0"
        approvals: list[AnyEvent] = [
            ApprovalAsked(**ids, call_id=call, server="s", tool="t", mode="ask", why="no_hints", grant_hash="h"),
            ApprovalGiven(**ids, call_id=call, server="s", tool="t", decision="run", grant_hash="h"),
        ]
        approvals = approvals if plan.get("approval") else []
        if plan["piece"]:
            out.append(ToolCallStarted(**ids, step=1, call_id=call, name="t"))
        out += [
            ToolCalled(**ids, step=1, call_id=call, name="t", arguments="{}"),
            StepFinished(**ids, step=1, finish_reason="tool_calls"),
            *approvals,
            ToolDispatched(**ids, call_id=call, server="s"),
            ToolProgress(**ids, call_id=call, progress=1, total=2),
            ToolResult(**ids, call_id=call, status="ok", content=f"<real:{call}>", size=12),
            StepStarted(**ids, step=2),
        ]
        request, step, answered = f"{att}-r2", 2, True
        out.append(RequestSent(**ids, request_id=request, model="x"))
    chunks(plan["chunks_after"])
    if plan["terminal"] == "done":
        out += [StepFinished(**ids, step=step, finish_reason="stop"), Done(**ids, request_id=request)]
        status = "complete"
    elif plan["terminal"] == "failed":
        out.append(Failed(**ids, request_id=request, error_type="server", summary="500"))
        status = "failed"
    else:
        out += [
            CancelRequested(**ids, source="user", turn=k + 1),
            UpstreamClosed(**ids, request_id=request, close_ms=1.0),
            Cancelled(**ids, source="user", delivered_chars=len(text), chunk_count=n),
        ]
        status = "interrupted" if text or answered else "empty"
    out.append(Persisted(**ids, message_id=msg, status=status, text=text, metrics=OWNER))
    return out


def sweeper_batch(log: list[AnyEvent], k: int) -> list[AnyEvent]:
    """What a sweep writes for ``a{k}``, read from the log as it is when it writes (one transaction)."""
    att, ids = f"a{k}", {"conversation_id": C, "attempt_id": f"a{k}"}
    attempt = replay(log).conversations[C].attempts[att]
    batch: list[AnyEvent] = []
    for call in sorted(attempt.tool_calls.values(), key=lambda c: c.position):
        if call.answered or call.phase == "streaming":
            continue  # answered, or half-written: never run, nothing invented
        running = call.phase == "running"
        if call.phase == "waiting":  # what a restart or sweep says of a wait it ends (``engine.turns.worker``)
            batch.append(
                ApprovalGiven(**ids, call_id=call.call_id, server="s", tool="t", decision="skip", by="restart")
            )
        words = UNKNOWN_OUTCOME if running else "Not run: the instance stopped before it was dispatched."
        batch.append(ToolResult(**ids, call_id=call.call_id, status="unknown" if running else "not_run", content=words))
    batch.append(Recovered(**ids))
    after = replay(batch, replay(log)).conversations[C].attempts[att]
    assert after.status in TERMINAL_STATUSES
    status = after.status
    assert status in ("complete", "interrupted", "failed", "empty")
    return [*batch, Persisted(**ids, message_id=after.message_id, status=status, text=after.text, metrics=SWEEPER)]


def arrival(plans: list[dict]) -> list[AnyEvent]:
    log: list[AnyEvent] = []
    deferred: list[AnyEvent] = []

    def arrive(events: list[AnyEvent]) -> None:
        for event in events:
            log.append(replace(event, seq=len(log) + 1, ts=ts(len(log))))

    for k, plan in enumerate(plans):
        arrive(
            [
                Submitted(
                    conversation_id=C, message_id=f"u{k}", turn=k + 1, text=f"q{k}", parent=f"a{k - 1}" if k else None
                )
            ]
        )
        owner = owner_script(k, plan)
        pause = 1 + round(plan["pause"] * (len(owner) - 1))
        arrive(owner[:pause])
        tail = owner[pause:]
        if plan["resume"] == "interleaved":
            where = round(plan["where"] * len(tail))
            arrive(tail[:where])
            arrive(sweeper_batch(log, k))
            arrive(tail[where:])
        else:
            arrive(sweeper_batch(log, k))
            deferred += tail if plan["resume"] == "at_end" else []
    arrive(deferred)
    return log


def expected_late(events: list[AnyEvent], att: str) -> list[int]:
    """Indexes of the attempt's events after its first end, except stale kinds and its first persisted."""
    mine = [(i, e) for i, e in enumerate(events) if getattr(e, "attempt_id", None) == att and e.KIND != "retrying"]
    end = next(i for i, e in mine if is_end(e))
    first_persisted = next(i for i, e in mine if isinstance(e, Persisted))
    return [i for i, e in mine if i > end and e.KIND not in STALE_KINDS and i != first_persisted]


def without_late(conv: ConversationState) -> ConversationState:
    attempts = Map({a: s._replace(late_events=0) for a, s in conv.attempts.items()})
    return conv._replace(attempts=attempts, last_seq=0, updated_ts="")


@settings(max_examples=300, deadline=None)
@given(st.lists(turn_plans, min_size=1, max_size=2))
def test_two_writers_over_one_attempt_leave_exactly_one_end_and_late_events_change_nothing(plans: list[dict]) -> None:
    events = arrival(plans)
    states = [EMPTY_STATE]
    for event in events:
        states.append(reduce(states[-1], event))
    conv = states[-1].conversations[C]
    audits = {a.attempt_id: a for a in audit(events)}
    late_all: list[int] = []
    for k in range(len(plans)):
        att = f"a{k}"
        attempt, mine = (
            conv.attempts[att],
            [(i, e) for i, e in enumerate(events) if getattr(e, "attempt_id", "") == att],
        )
        end_i, end = next((i, e) for i, e in mine if is_end(e))
        first_p = next(e for _, e in mine if isinstance(e, Persisted))
        assert not isinstance(end, Persisted), "every script writes its terminal before its persisted"

        # one terminal applied, the first in seq order, then the first persisted
        expected = {"done": ("complete",), "failed": ("failed",)}.get(end.KIND, ("interrupted", "empty"))
        assert attempt.status in expected, (end.KIND, attempt.status)
        assert attempt.cancel_source == {"recovered": "restart", "cancelled": "user"}.get(end.KIND)
        assert attempt.persisted and attempt.metrics == first_p.metrics
        assert attempt.status == first_p.status

        # the text: the rendered chunks in chunk_seq order, the persisted text; received = rendered + stale
        closing = next((i for i, e in mine if isinstance(e, CancelRequested)), len(events))
        rendered = [e for i, e in mine if isinstance(e, Chunk) and i < min(end_i, closing)]
        text = "".join(c.text for c in sorted(rendered, key=lambda c: c.chunk_seq))
        assert attempt.text == text == first_p.text
        received = sum(1 for _, e in mine if isinstance(e, Chunk | StaleChunk))
        assert attempt.chunks_received == received == attempt.chunks_rendered + attempt.stale_chunks
        assert attempt.chunks_rendered == len(rendered)

        # every complete tool call has exactly one applied result: the first that came before the end
        for i, e in mine:
            if isinstance(e, ToolCalled) and i < end_i:
                call = attempt.tool_calls[e.call_id]
                first = next(r for j, r in mine if isinstance(r, ToolResult) and r.call_id == e.call_id and j < end_i)
                assert (call.status, call.content) == (first.status, first.content)
        for call in attempt.tool_calls.values():
            assert call.answered == (call.phase != "streaming"), call

        # late events: counted, shown as late by the audit; the first end stands there too
        late = expected_late(events, att)
        late_all += late
        assert attempt.late_events == len(late)
        a = audits[att]
        assert a.late_events == len(late) and a.status == attempt.status
        assert sum(p.late for p in a.phases) == sum(1 for i in late if events[i].KIND not in COUNTED_ONLY)
        ends = [p for p in a.phases if not p.late and p.kind in ("done", "failed", "cancelled", "recovered")]
        assert [p.kind for p in ends] == [end.KIND] and ends[0].ts == end.ts
        assert [p.ts for p in a.phases if p.kind == "persisted" and not p.late] == [first_p.ts]
        assert (a.chunk_count, a.stale_chunks) == (attempt.chunks_rendered, attempt.stale_chunks)
        assert a.tool_calls == sum(1 for c in attempt.tool_calls.values() if c.phase != "streaming")

    # the model history: exactly one tool message per tool_call_id, nothing a late event said
    messages = as_messages(model_history(conv))
    assert history_problem(messages) is None, messages
    ids = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    assert len(ids) == len(set(ids))
    for i in late_all:
        if isinstance(late_event := events[i], ToolResult):
            assert late_event.content not in str(messages), "a late result reached the model"

    # adding the late events changes nothing but late_events
    kept = [e for i, e in enumerate(events) if i not in set(late_all)]
    bare = replay(kept).conversations[C]
    assert without_late(conv) == without_late(bare)
    assert model_history(conv) == model_history(bare)

    # the summary folded from the events agrees with the replayed conversation after every event
    folded = None
    for event, state in zip(events, states[1:], strict=True):
        folded = summarize(folded, event)
        assert folded == summary_of(state.conversations[C])
    assert folded is not None and folded.open_attempts == ()


def test_a_sweep_then_the_owner_resumed_keeps_the_sweeps_end_and_shows_unknown_outcome() -> None:
    plan = {"chunks_before": 2, "resent": False, "tool": True, "piece": False, "chunks_after": 1}
    owner = owner_script(0, plan | {"terminal": "done"})
    at = next(i for i, e in enumerate(owner) if isinstance(e, ToolProgress)) + 1
    log: list[AnyEvent] = [Submitted(conversation_id=C, message_id="u0", turn=1, text="q0"), *owner[:at]]
    log += sweeper_batch(log, 0) + owner[at:]
    log = [replace(e, seq=n, ts=ts(n)) for n, e in enumerate(log, start=1)]
    attempt = replay(log).conversations[C].attempts["a0"]
    call = attempt.tool_calls["a0-c0"]
    assert (call.status, call.content) == ("unknown", UNKNOWN_OUTCOME)
    assert (attempt.status, attempt.cancel_source, attempt.metrics) == ("interrupted", "restart", SWEEPER)
    assert attempt.text == "<a0:0><a0:1>" and attempt.stale_chunks == 1
    # the owner's result, step 2, its request, step end, done and persisted came after the end: late
    assert attempt.late_events == 6 and len(attempt.steps) == 1 and attempt.request_ids == ("a0-r0",)
    tool = [m for m in as_messages(model_history(replay(log).conversations[C])) if m["role"] == "tool"]
    assert [m["content"] for m in tool] == [UNKNOWN_OUTCOME]
    (a,) = audit(log)
    late = ["tool_result", "step_started", "request_sent", "step_finished", "done", "persisted"]
    assert [p.kind for p in a.phases if p.late] == late
    shown = next(p for p in a.phases if p.late)
    assert phase_label(shown) == "late tool result"
    assert phase_detail(shown) == "t said done; recorded after the attempt ended: not applied (the first end stands)"
    assert "6 late events (not applied)" in audit_counters(a)
    result = next(p for p in a.phases if p.kind == "tool_result" and not p.late)
    assert phase_detail(result).startswith("t: unknown outcome, ")
    assert card_status(call, attempt_live=False) == "unknown" and tool_state_words("unknown") == "unknown outcome"
    assert "unknown" in ICONS


@settings(max_examples=300, deadline=None)
@given(st.lists(steps, max_size=80))
def test_in_random_sessions_every_event_after_an_attempts_end_is_late_and_changes_nothing(plan: list[tuple]) -> None:
    events = build_events(plan)
    conv = replay(events).conversations.get(CONV)
    if conv is None:
        return
    late: set[int] = set()
    for att in conv.attempts:
        mine = [(i, e) for i, e in enumerate(events) if getattr(e, "attempt_id", None) == att and e.KIND in KINDS]
        end = next((i for i, e in mine if is_end(e)), None)
        if end is None:
            assert conv.attempts[att].late_events == 0
            continue
        persisted = [
            i for i, e in mine if isinstance(e, Persisted) and i > end and not isinstance(events[end], Persisted)
        ]
        found = [i for i, e in mine if i > end and e.KIND not in STALE_KINDS and i not in persisted[:1]]
        assert conv.attempts[att].late_events == len(found), att
        late.update(found)
    bare = replay(e for i, e in enumerate(events) if i not in late).conversations[CONV]
    assert without_late(conv) == without_late(bare)
    assert as_messages(model_history(conv)) == as_messages(model_history(bare))
